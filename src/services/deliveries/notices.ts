import type { Kysely } from 'kysely';
import type { Tenant } from '../../core/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { Credentials } from '../../msv3/credentials.js';
import type { DeliveryNotice } from '../../msv3/operations/lieferavis.js';
import { lieferavisAbfrageNeu } from '../../msv3/operations/lieferavis-abfrage-neu.js';
import { lieferavisBestaetigen } from '../../msv3/operations/lieferavis-bestaetigen.js';
import {
  type CustomerScope,
  customerHash,
  markNoticesConfirmed,
  type StoredNotice,
  saveSeenNotices,
} from '../../store/delivery-notices.js';
import type { Tables } from '../../store/schema.js';
import type { EventRecorder } from '../../webhooks/events/record.js';
import { callWholesaler, type UpstreamDeps } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { creditDeliveryNotice } from '../orders/fulfilment.js';
import { type DeliveryNoticeJson, hasShortages, toDeliveryNoticeJson } from './view.js';

/** Delivery notices (docs/msv3.md "Delivery notices"): read the new ones, confirm them. */

export interface DeliveryDeps {
  upstream: UpstreamDeps;
  db: Kysely<Tables>;
  clock: Clock;
  /** Writes a webhook event into the outbox, inside the transaction that stores its notice. */
  recordEvent: EventRecorder;
}

/** One pharmacy's call to one wholesaler. */
export interface CustomerRequest {
  tenant: Tenant;
  /** The wholesaler id as requested. */
  wholesaler: string;
  credentials: Credentials;
}

export function customerScopeOf(request: CustomerRequest): CustomerScope {
  return {
    accountId: request.tenant.accountId,
    mode: request.tenant.mode,
    wholesaler: request.wholesaler,
    customerHash: customerHash(request.credentials.username),
  };
}

/**
 * Stores what the wholesaler just returned for this customer. A notice seen for the first time (from
 * the unconfirmed list or a history lookup) gets a `delivery.received` event, and a
 * `delivery.shortage` event if it has shortages, and is credited to the orders it fills
 * (`orders/fulfilment.ts`), in the transaction that stores it.
 */
export function rememberNotices(
  deps: DeliveryDeps,
  request: CustomerRequest,
  notices: readonly DeliveryNotice[],
): Promise<StoredNotice[]> {
  const customer = {
    accountId: request.tenant.accountId,
    mode: request.tenant.mode,
    wholesaler: request.wholesaler,
    customerId: request.credentials.username,
  };
  return saveSeenNotices(deps.db, deps.clock, customerScopeOf(request), notices, async (trx, stored) => {
    const base = { ...customer, data: toDeliveryNoticeJson(stored.notice) };
    await deps.recordEvent(trx, { type: 'delivery.received', ...base });
    if (hasShortages(stored.notice)) await deps.recordEvent(trx, { type: 'delivery.shortage', ...base });
    await creditDeliveryNotice(trx, deps, customer, stored.notice);
  });
}

export function resolveWholesaler(deps: DeliveryDeps, request: CustomerRequest): Promise<ResolvedWholesaler> {
  return deps.upstream.registry.resolve(request.tenant, request.wholesaler);
}

export interface NewDeliveriesJson {
  wholesaler: string;
  deliveries: DeliveryNoticeJson[];
}

/** `GET /v1/deliveries`: the unconfirmed notices (`lieferavisAbfrageNeu`), each one stored as seen. */
export async function listNewDeliveries(
  deps: DeliveryDeps,
  request: CustomerRequest,
): Promise<NewDeliveriesJson> {
  const wholesaler = await resolveWholesaler(deps, request);
  const { value } = await callWholesaler(
    deps.upstream,
    wholesaler,
    lieferavisAbfrageNeu,
    request.credentials,
    {
      clientSoftwareId: deps.upstream.clientSoftwareId,
    },
  );
  await rememberNotices(deps, request, value.notices);
  return { wholesaler: request.wholesaler, deliveries: value.notices.map(toDeliveryNoticeJson) };
}

export interface ConfirmedDeliveriesJson {
  wholesaler: string;
  confirmed: string[];
  status: 'confirmed';
}

/**
 * `POST /v1/deliveries/confirm` (`lieferavisBestaetigen`): afterwards the wholesaler no longer lists
 * the notices as new (docs/msv3.md "Delivery notices"). Repeated numbers are sent once.
 */
export async function confirmDeliveries(
  deps: DeliveryDeps,
  request: CustomerRequest,
  trackingNumbers: readonly string[],
): Promise<ConfirmedDeliveriesJson> {
  const wholesaler = await resolveWholesaler(deps, request);
  const unique = [...new Set(trackingNumbers)];
  await callWholesaler(deps.upstream, wholesaler, lieferavisBestaetigen, request.credentials, {
    clientSoftwareId: deps.upstream.clientSoftwareId,
    deliveryNoteNumbers: unique,
  });
  await markNoticesConfirmed(deps.db, deps.clock, customerScopeOf(request), unique);
  return { wholesaler: request.wholesaler, confirmed: unique, status: 'confirmed' };
}
