import { readFileSync } from 'node:fs';

/** The running service's version, from package.json (two levels up from both src/http and dist/http). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
