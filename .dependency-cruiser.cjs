/**
 * The layers of docs/ARCHITECTURE.md ("Layers"), checked in CI (`npm run lint:layers`): each layer may
 * import only the layers below it, type-only imports included, and nothing may form a cycle.
 *
 *   top       app.ts, server.ts, wiring.ts, jobs.ts, startup-summary.ts, cli.ts, index.ts, cluster/
 *   http      http/ (routes, hooks, schemas, the OpenAPI document)
 *   features  services/ > wholesalers/ > webhooks/ > mock/ (each may import those after it)
 *   ratelimit ratelimit/
 *   store     store/
 *   msv3      msv3/ (the protocol: codecs, transport)
 *   base      observability/, config.ts
 *   lib       lib/
 *   core      core/ (the error catalogue, shared types; imports nothing of the project)
 */
const ABOVE = {
  core: '^src/(?!core/)',
  lib: '^src/(?!core/|lib/)',
  base: '^src/(http|services|webhooks|wholesalers|mock|ratelimit|store|msv3|cluster)/|^src/(app|server|cli|index|wiring|jobs|startup-summary)\\.ts$',
  msv3: '^src/(http|services|webhooks|wholesalers|mock|ratelimit|store|cluster)/|^src/(app|server|cli|index|wiring|jobs|startup-summary)\\.ts$',
  store:
    '^src/(http|services|webhooks|wholesalers|mock|ratelimit|cluster)/|^src/(app|server|cli|index|wiring|jobs|startup-summary)\\.ts$',
  ratelimit:
    '^src/(http|services|webhooks|wholesalers|mock|cluster)/|^src/(app|server|cli|index|wiring|jobs|startup-summary)\\.ts$',
  features: '^src/(http|cluster)/|^src/(app|server|cli|index|wiring|jobs|startup-summary)\\.ts$',
  http: '^src/cluster/|^src/(app|server|cli|index|wiring|jobs|startup-summary)\\.ts$',
};
const LAYER = {
  core: '^src/core/',
  lib: '^src/lib/',
  base: '^src/observability/|^src/config\\.ts$',
  msv3: '^src/msv3/',
  store: '^src/store/',
  ratelimit: '^src/ratelimit/',
  features: '^src/(services|webhooks|wholesalers|mock)/',
  http: '^src/http/',
};

/**
 * The order inside the features layer: the services (what the routes call) use the wholesalers (the
 * registry, targets, calls and their status), which record events through webhooks (the outbox and
 * its delivery); mock (the sandbox wholesaler) stands alone below them.
 */
const FEATURES = ['services', 'wholesalers', 'webhooks', 'mock'];
const FEATURES_BELOW = Object.fromEntries(FEATURES.map((f, i) => [f, FEATURES.slice(i + 1)]));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle means two modules are one: merge them or move what both need below them.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...Object.entries(LAYER).map(([layer, path]) => ({
      name: `${layer}-imports-only-below`,
      comment: `${layer} may import only the layers below it (docs/ARCHITECTURE.md).`,
      severity: 'error',
      from: { path },
      to: { path: ABOVE[layer] },
    })),
    ...Object.entries(FEATURES_BELOW).map(([feature, below]) => ({
      name: `features-order-${feature}`,
      comment: `Inside the features layer, ${feature}/ may import only ${below.join(', ') || 'none of the others'} (docs/ARCHITECTURE.md).`,
      severity: 'error',
      from: { path: `^src/${feature}/` },
      to: { path: `^src/(${FEATURES.filter((f) => f !== feature && !below.includes(f)).join('|')})/` },
    })),
    {
      name: 'no-route-to-route',
      comment: 'A route module imports no other route module: what routes share lives in src/http/.',
      severity: 'error',
      from: { path: '^src/http/routes/' },
      to: { path: '^src/http/routes/' },
    },
    {
      name: 'client-stands-alone',
      comment: 'packages/client ships alone (npm pack): its sources import only each other and the platform.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { pathNot: '^packages/client/src/' },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API to parse with; swc reads the sources.
    parser: 'swc',
    tsPreCompilationDeps: true,
    includeOnly: '^(src|packages/client/src)/',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$|/test-support/' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
