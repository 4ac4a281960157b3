import { readFileSync } from 'node:fs';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
  license: string;
};

/** The running service's version, from package.json (two levels up from both src/http and dist/http). */
export const VERSION: string = PACKAGE.version;

/** The package's licence (an SPDX id, or UNLICENSED), for the OpenAPI document. */
export const LICENSE: string = PACKAGE.license;
