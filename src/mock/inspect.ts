import type { SubOrderAnswer } from '../msv3/operations/bestellen.js';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import type { World } from './state.js';

/**
 * Read-only views of a mock's state, for tests and for the gateway's sandbox ("exactly one order was
 * placed", "the notice exists"). Tenants are matched case-insensitively, like the URL paths.
 */

interface OrderView {
  id: string;
  placedAt: number;
  /** Taken in night mode (the first answer had `NachtBetrieb=true`). */
  nightMode: boolean;
  /** The sub-order answers once processed; undefined while a night order waits. */
  subOrders?: readonly SubOrderAnswer[];
}

interface NoticeView {
  notice: DeliveryNotice;
  confirmed: boolean;
}

interface StateFilter {
  /** Default: every tenant. */
  tenant?: string;
  /** Default: every customer. */
  customerId?: string;
}

export interface MockInspector {
  /** Orders placed so far (a repeated `bestellen` with a known Id does not count). */
  placedOrderCount(filter?: StateFilter): number;
  orders(tenant: string, customerId: string): OrderView[];
  deliveryNotices(tenant: string, customerId: string): NoticeView[];
}

export function createInspector(world: World): MockInspector {
  const customersOf = (filter: StateFilter = {}) => {
    const tenants =
      filter.tenant === undefined
        ? [...world.tenants()]
        : [world.findTenant(filter.tenant.toLowerCase())].filter((t) => t !== undefined);
    return tenants.flatMap((t) =>
      [...t.customers.values()].filter(
        (c) => filter.customerId === undefined || c.customerId === filter.customerId,
      ),
    );
  };
  const customer = (tenant: string, customerId: string) => customersOf({ tenant, customerId })[0];
  return {
    placedOrderCount: (filter) => customersOf(filter).reduce((n, c) => n + c.ordersPlaced, 0),
    orders: (tenant, customerId) =>
      [...(customer(tenant, customerId)?.orders.values() ?? [])].map((o) => ({
        id: o.id,
        placedAt: o.placedAt,
        nightMode: o.firstAnswer.nightMode,
        ...(o.processed === undefined ? {} : { subOrders: o.processed }),
      })),
    deliveryNotices: (tenant, customerId) =>
      [...(customer(tenant, customerId)?.notices.values() ?? [])].map((n) => ({
        notice: n.notice,
        confirmed: n.confirmed,
      })),
  };
}
