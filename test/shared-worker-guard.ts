import timers from 'node:timers';
import { beforeAll } from 'vitest';

/**
 * Test files share their worker (vitest.config.ts, `isolate: false`), so one that leaves fake or spied
 * timers behind breaks the files after it in ways far from the cause (a periodic job that never runs).
 * Each file starts by checking that the global timers are still Node's own.
 */
const TIMERS = ['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval'] as const;

beforeAll(() => {
  for (const name of TIMERS) {
    if (globalThis[name] !== timers[name]) {
      throw new Error(
        `globalThis.${name} is not Node's own: a test file run before this one in the same worker left fake or spied timers behind`,
      );
    }
  }
});
