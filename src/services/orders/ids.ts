import { createHash } from 'node:crypto';
import type { Caller } from '../../core/caller.js';
import { newUuid } from '../../lib/ids.js';

/**
 * The ids of an order. Everything the wholesaler sees is derived from the Bestellung Id, and the
 * Bestellung Id from the Idempotency-Key when there is one, so a retry (even after a gateway crash, on
 * another gateway process) sends a byte-identical `bestellen` and finds the same stored order: the
 * wholesaler can never receive two orders with different Ids for one request.
 */

export interface OrderKeyScope extends Caller {
  idempotencyKey: string;
  /**
   * When the key was first used (from its idempotency record, the same for every attempt in its 24 hours).
   * It makes a key that is reused after its record expired a new order, as Stripe treats it, instead of
   * colliding with the old Bestellung Id (wholesalers keep Ids for at least 7 days).
   */
  firstUsedAt: number;
}

/** A UUID (RFC 9562 version 8, "custom") from the first 16 bytes of a SHA-256. */
export function uuidFromHash(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part, 'utf8').update('\0');
  const bytes = hash.digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** With a key: derived from account, API key, mode, key and its first use. Without: a fresh random UUID. */
export function bestellungIdFor(scope: OrderKeyScope | undefined): string {
  if (scope === undefined) return newUuid();
  return uuidFromHash(
    'msv3-gateway/bestellung/v1',
    scope.accountId,
    scope.keyId,
    scope.mode,
    scope.idempotencyKey,
    String(scope.firstUsedAt),
  );
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `GW-` + 22 base62 characters of a SHA-256 of the Bestellung Id: stable, opaque, ~131 bits. */
export function gatewayOrderId(bestellungId: string): string {
  let n = BigInt(`0x${createHash('sha256').update(`gw-order\0${bestellungId}`).digest('hex').slice(0, 32)}`);
  let token = '';
  for (let i = 0; i < 22; i++) {
    token += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return `GW-${token}`;
}

export const GATEWAY_ORDER_ID_PATTERN = '^GW-[0-9A-Za-z]{22}$';

/** The Id of the order's sub-order at `index` (0 for the first): derived, so a resend is identical. */
export function subOrderIdFor(bestellungId: string, index: number): string {
  return uuidFromHash('msv3-gateway/auftrag/v1', bestellungId, String(index));
}

/** `BestellSupportId` / `AuftragsSupportID`, 1..999999, derived for the same reason. */
export function supportIdFor(id: string): number {
  const value = createHash('sha256').update(`support\0${id}`).digest().readUInt32BE(0);
  return (value % 999_999) + 1;
}

/**
 * A split order's id (docs/split-orders.md): derived like the Bestellung Id of a single order, so a
 * retry with the same key (even on another process, after a crash) finds the same stored plan.
 */
export function splitIdFor(scope: OrderKeyScope): string {
  const uuid = uuidFromHash(
    'msv3-gateway/split/v1',
    scope.accountId,
    scope.keyId,
    scope.mode,
    scope.idempotencyKey,
    String(scope.firstUsedAt),
  );
  return `SP-${uuid.replaceAll('-', '')}`;
}

export const SPLIT_ID_PATTERN = '^SP-[0-9a-f]{32}$';

/** The Bestellung Id of one wholesaler's order of a split: fixed in the plan before anything is sent. */
export function splitBestellungId(splitId: string, wholesaler: string): string {
  return uuidFromHash('msv3-gateway/split-bestellung/v1', splitId, wholesaler.toLowerCase());
}
