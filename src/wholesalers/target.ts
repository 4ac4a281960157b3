import type { KeyMode } from '../core/key-mode.js';

/**
 * What a wholesaler call is for, as the transports budget it: one circuit breaker and one concurrency
 * limit per target (docs/resilience.md). Real catalogue servers (live, `<id>_test`) have one target per
 * endpoint, shared by every account. The sandbox takes any password and simulates failures per request,
 * so each account has a target of its own there: one account's scenario faults never pause another's
 * calls. A custom wholesaler belongs to one account and is called through the address-restricted
 * transport.
 */
export interface Target {
  /** The id clients use (`phoenix`, `phoenix_test`, `custom-…`). */
  wholesaler: string;
  route: Route;
  /** The sandbox and custom wholesalers: the one account whose target it is; null when shared. */
  accountId: string | null;
  /** A customer-registered endpoint: called through the address-restricted transport. */
  custom: boolean;
}

/**
 * `sandbox`: the built-in mock wholesaler (test keys, every id without `_test`).
 * `test_server`: the wholesaler's own test server (test keys, `<id>_test`).
 * `live`: the wholesaler's production server (live keys).
 */
export type Route = 'sandbox' | 'test_server' | 'live';

/** The transports' name for a target: their breakers and limits are kept by it. The one key function. */
export function targetKey(target: Target): string {
  const account = target.accountId === null ? '' : `${target.accountId}/`;
  if (target.route === 'sandbox') return `sandbox/${account}${target.wholesaler}`;
  return target.custom ? `custom/${account}${target.wholesaler}` : target.wholesaler;
}

export function modeOf(target: Target): KeyMode {
  return target.route === 'live' ? 'live' : 'test';
}

/**
 * The targets this process has called, by key: the transports report breaker changes by key, and the
 * status feed tells them by wholesaler, mode and account. Every call's endpoint comes from the registry,
 * which notes its target first, so a key the transports report is always here.
 */
export interface TargetDirectory {
  /** Remembers `target`; returns its key. */
  note(target: Target): string;
  find(key: string): Target | undefined;
}

export function createTargetDirectory(): TargetDirectory {
  const known = new Map<string, Target>();
  return {
    note(target) {
      const key = targetKey(target);
      if (!known.has(key)) known.set(key, target);
      return key;
    },
    find: (key) => known.get(key),
  };
}
