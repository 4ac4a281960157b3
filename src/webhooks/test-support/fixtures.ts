import type { Kysely } from 'kysely';
import type { Tenant } from '../../core/caller.js';
import type { EventType } from '../../core/event-types.js';
import type { KeyMode } from '../../core/key-mode.js';
import { createAddressPolicy } from '../../lib/address-policy.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import { createAccount } from '../../store/accounts.js';
import type { Tables } from '../../store/schema.js';
import { createSubscription } from '../subscriptions/service.js';

export async function newScope(db: Kysely<Tables>, mode: KeyMode = 'test'): Promise<Tenant> {
  const account = await createAccount(db, systemClock, { name: 'Apotheke am Markt' });
  return { accountId: account.id, mode };
}

/** For subscriptions made without the registry: every wholesaler id is accepted. */
export const anyWholesaler = async () => {};

/** A subscription to a loopback receiver (private endpoints allowed; any wholesaler id). */
export function subscribe(
  db: Kysely<Tables>,
  scope: Tenant,
  input: { url: string; wholesaler?: string; events?: EventType[] },
  clock: Clock = systemClock,
) {
  return createSubscription(
    {
      db,
      clock,
      addressPolicy: createAddressPolicy({ allowPrivateEndpoints: true }),
      resolveWholesaler: anyWholesaler,
    },
    scope,
    {
      url: input.url,
      wholesaler: input.wholesaler ?? 'phoenix',
      events: input.events ?? [
        'delivery.received',
        'delivery.shortage',
        'order.status_changed',
        'wholesaler.status_changed',
      ],
    },
  );
}

export const sampleNotice = {
  tracking_number: 'LA-2026-0001',
  barcode: '4011234567890',
  order_type: 'normal',
  date: '2026-01-05',
  has_shortages: true,
  items: [
    { pzn: '04114918', quantity_delivered: 5, shortages: 0 },
    { pzn: '00012345', quantity_delivered: 1, shortages: 2 },
  ],
};
