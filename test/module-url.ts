import { readFileSync } from 'node:fs';
import { transformSync } from '@swc/core';

/**
 * A TypeScript module without imports as JavaScript in a data: URL, for a fresh `node` process to load
 * without a TypeScript loader (whose own objects and ticks would share the heap the test looks at).
 */
export function moduleAsDataUrl(file: URL): string {
  const { code } = transformSync(readFileSync(file, 'utf8'), {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'es6' },
  });
  return `data:text/javascript,${encodeURIComponent(code)}`;
}
