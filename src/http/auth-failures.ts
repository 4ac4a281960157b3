import { ApiError } from '../core/errors.js';
import { effectiveAddress, ipv6Words } from '../lib/address-kinds.js';
import type { RateLimitDecision } from '../ratelimit/rate-limiter.js';

/**
 * Under which name a client's failed API key attempts are counted (docs/security.md): an IPv4 address as
 * it is (IPv4-mapped IPv6 included), an IPv6 address by its /64, the block one host or customer is
 * usually given, so a client cannot start afresh from each of its 2^64 addresses.
 */
export function failureCounterKey(ip: string): string {
  const target = effectiveAddress(ip);
  if (target === undefined) return ip;
  if (target.family === 4) return target.address;
  const words = ipv6Words(target.address)!;
  return `${words
    .slice(0, 4)
    .map((word) => word.toString(16))
    .join(':')}::/64`;
}

export function tooManyFailures(decision: RateLimitDecision): ApiError {
  const retryAfter = Math.max(1, decision.resetSeconds);
  return new ApiError(
    'rate_limited',
    `Too many unknown or revoked API keys came from this address; retry in ${retryAfter} s.`,
    { retryAfter },
  );
}
