import { ApiError } from '../core/errors.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';
import type { GatewayApp } from './types.js';

/**
 * Charges every keyed request to its key's budget (after auth) and reports the budget on the response:
 * RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds until the window resets). Over
 * budget: 429 with Retry-After.
 */
export function installRateLimit(app: GatewayApp, deps: { rateLimiter: RateLimiter }): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 || request.routeOptions.config.public) return;
    const { keyId, mode } = request.auth;
    const decision = await deps.rateLimiter.consume(keyId, mode);
    reply.header('ratelimit-limit', decision.limit);
    reply.header('ratelimit-remaining', decision.remaining);
    reply.header('ratelimit-reset', decision.resetSeconds);
    if (!decision.allowed) {
      const retryAfter = Math.max(1, decision.resetSeconds);
      throw new ApiError(
        'rate_limited',
        `This ${mode} key may make ${decision.limit} requests per window; retry in ${retryAfter} s.`,
        { retryAfter },
      );
    }
  });
}
