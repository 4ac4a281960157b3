import { newUuid } from '../../lib/ids.js';
import { type OrderKeyScope, supportIdFor, uuidFromHash } from '../orders/ids.js';

/**
 * The MSV3 request id (and support id) of a return enquiry, announcement or take-back offer. With an
 * Idempotency-Key they are derived from it as order ids are (`orders/ids.ts`): a retry after a lost
 * answer, even on another gateway process, sends the same request, which the wholesaler recognises by
 * its id instead of taking a second announcement. Without a key: fresh random ones.
 */
export function requestIdFor(
  operation: 'retourenavisAnfragen' | 'retourenavisAnkuendigen' | 'ruecknahmeangebotAnfordern',
  scope: OrderKeyScope | undefined,
): { id: string; supportId: number } {
  const id =
    scope === undefined
      ? newUuid()
      : uuidFromHash(
          `msv3-gateway/${operation}/v1`,
          scope.accountId,
          scope.keyId,
          scope.mode,
          scope.idempotencyKey,
          String(scope.firstUsedAt),
        );
  return { id, supportId: supportIdFor(id) };
}
