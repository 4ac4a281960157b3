import { describe, it } from 'vitest';
import { warnSkipped } from './db.js';

function redisUrl(): string | undefined {
  return process.env.TEST_REDIS_URL || undefined;
}

/** Runs the suite with `TEST_REDIS_URL`, or shows one skipped test saying why. Use a unique key prefix per test. */
export function describeWithRedis(name: string, suite: (url: string) => void): void {
  describe(`${name} [redis]`, () => {
    const url = redisUrl();
    if (url === undefined) {
      warnSkipped('TEST_REDIS_URL', 'Redis');
      it.skip('skipped: TEST_REDIS_URL is not set, so Redis is not tested', () => {});
      return;
    }
    suite(url);
  });
}
