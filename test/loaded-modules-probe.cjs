// Preloaded (`node --require`) into a gateway process by test/tracing-process.test.ts: at exit it writes
// the CommonJS modules the process loaded to LOADED_MODULES_FILE. OpenTelemetry's packages are loaded as
// CommonJS (their `main`), even from an ESM `import()`, so they show up here when they were loaded.
const { writeFileSync } = require('node:fs');

const file = process.env.LOADED_MODULES_FILE;
process.on('exit', () => {
  if (file) writeFileSync(file, JSON.stringify(Object.keys(require.cache)));
});
