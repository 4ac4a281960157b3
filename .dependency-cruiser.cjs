module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    { name: 'lib-is-leaf', severity: 'error', from: { path: '^src/lib/' }, to: { path: '^src/', pathNot: '^src/lib/' } },
    { name: 'msv3-below', severity: 'error', from: { path: '^src/msv3/' }, to: { path: '^src/(http|services|store|webhooks|wholesalers|app|server|cli|cluster)' } },
    { name: 'store-below', severity: 'error', from: { path: '^src/store/' }, to: { path: '^src/(http|services|webhooks|wholesalers|msv3|app|server|cli|cluster)' } },
    { name: 'services-not-http', severity: 'error', from: { path: '^src/(services|webhooks|wholesalers)/' }, to: { path: '^src/(http|app|server|cli|cluster)' } },
    { name: 'nothing-imports-app', severity: 'error', from: { path: '^src/(http|services|store|msv3|webhooks|wholesalers|lib)/' }, to: { path: '^src/(app|server|cli)\\.ts' } },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    includeOnly: '^src/',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$|test-support' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
