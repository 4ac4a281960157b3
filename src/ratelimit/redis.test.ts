import { describe, expect, it } from 'vitest';
import { redisStartError } from './redis.js';

describe('the start-up error for an unreachable Redis', () => {
  it('names REDIS_URL and the cause, and leaves the password out of both', () => {
    const cause = new Error('WRONGPASS for p@ss:w/rd and p%40ss%3Aw%2Frd');
    const error = redisStartError('rediss://app:p%40ss%3Aw%2Frd@cache.internal:6380/2', cause);
    expect(error.message).toBe(
      'REDIS_URL rediss://app@cache.internal:6380/2: Redis is not reachable (WRONGPASS for *** and ***)',
    );
    expect(error.cause).toBe(cause);
  });
});
