import { hash } from 'node:crypto';
import type { KeyMode } from '../core/key-mode.js';
import { base62Fixed, crc32, randomToken } from '../lib/ids.js';

/** 30 base62 characters ≈ 178 bits of randomness; 6 more carry a CRC-32 of everything before them. */
const RANDOM_LENGTH = 30;
const KEY_PATTERN = /^pk_(test|live)_[0-9A-Za-z]{36}$/;

/** A new secret key: `pk_<mode>_` + random + checksum, recognisable offline by secret scanners. */
export function generateApiKey(mode: KeyMode): string {
  const body = `pk_${mode}_${randomToken(RANDOM_LENGTH)}`;
  return body + base62Fixed(crc32(body));
}

/** Format and checksum check, without touching the database; `undefined` for anything malformed. */
export function parseApiKey(text: string): { mode: KeyMode } | undefined {
  if (apiKeyProblem(text) !== undefined) return undefined;
  return { mode: text.startsWith('pk_live_') ? 'live' : 'test' };
}

/**
 * Why `text` is not a key: `not_a_key` (wrong prefix, length or characters) or `typing_error` (the
 * shape of a key whose checksum does not match: a character was changed, lost in copying or swapped);
 * undefined for a well-formed key.
 */
export function apiKeyProblem(text: string): 'not_a_key' | 'typing_error' | undefined {
  if (!KEY_PATTERN.test(text)) return 'not_a_key';
  const body = text.slice(0, -6);
  return base62Fixed(crc32(body)) === text.slice(-6) ? undefined : 'typing_error';
}

/** SHA-256 in hex; the one-shot `hash` (no Hash object per call): this runs on every keyed request. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What may be shown of a key after creation: `pk_test_AbCd…WxYz`. */
export function displayParts(key: string): { prefix: string; last4: string } {
  const modeEnd = key.indexOf('_', 3) + 1;
  return { prefix: key.slice(0, modeEnd + 4), last4: key.slice(-4) };
}
