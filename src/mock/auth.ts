import { createHash, timingSafeEqual } from 'node:crypto';
import { isKundenKennung } from '../msv3/operations/extra-fields.js';
import { SCENARIO_PASSWORDS } from './scenarios.js';

/**
 * HTTP Basic authentication as MSV3 servers do it (docs/msv3.md "Authentication"): the user name is the
 * customer id (Kundenkennung). A missing or bad login gets 401 with the `Basic realm="MSV3"` challenge, so
 * that non-pre-emptive clients send credentials on the second attempt.
 *
 * Sandbox mode (no fixed credentials) accepts any well-formed Kundenkennung with any non-empty password,
 * so a new user's first call works, except the scenario passwords (`SCENARIO_PASSWORDS`). The password is
 * compared and forgotten: never stored, never logged.
 */

export const REALM = 'MSV3';

export type AuthResult = { ok: true; customerId: string } | { ok: false; status: 401 | 403 };

const REJECTED = { ok: false, status: 401 } as const;

function decodeBasic(header: string | undefined): { username: string; password: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Compares digests so the time taken does not depend on where the strings differ. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function authenticate(
  authorization: string | undefined,
  fixed?: { username: string; password: string },
): AuthResult {
  const login = decodeBasic(authorization);
  if (login === undefined) return REJECTED;
  if (fixed !== undefined) {
    const userOk = sameSecret(login.username, fixed.username);
    const passwordOk = sameSecret(login.password, fixed.password);
    return userOk && passwordOk ? { ok: true, customerId: login.username } : REJECTED;
  }
  if (!isKundenKennung(login.username) || login.password === '') return REJECTED;
  if (login.password === SCENARIO_PASSWORDS.REJECTED) return REJECTED;
  if (login.password === SCENARIO_PASSWORDS.FORBIDDEN) return { ok: false, status: 403 };
  return { ok: true, customerId: login.username };
}
