import type { FastifyReply } from 'fastify';
import { ApiError } from '../core/errors.js';
import type { RateLimitDecision, RateLimiter } from '../ratelimit/rate-limiter.js';
import type { GatewayApp } from './types.js';

/**
 * Charges every keyed request to its key's budget (after auth) and reports the budget on the response:
 * RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds until the window resets). Over
 * budget: 429 with Retry-After.
 */
export function installRateLimit(app: GatewayApp, deps: { rateLimiter: RateLimiter }): void {
  // A callback hook on the limiter's promise: one microtask hop less than an async hook.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404 || request.routeOptions.config.public) return done();
    const { keyId, mode } = request.auth;
    deps.rateLimiter
      .consume(keyId, mode)
      .then((decision) => charge(decision, mode, reply))
      .then(() => done(), done);
  });
}

function charge(decision: RateLimitDecision, mode: string, reply: FastifyReply): void {
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
}
