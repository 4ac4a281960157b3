import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/errors.js';
import { manualClock } from '../../lib/clock.js';
import type { Msv3Client } from '../../msv3/client.js';
import { createCredentials } from '../../msv3/credentials.js';
import type { ContractDataResponse } from '../../msv3/operations/vertragsdaten-abfragen.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { checkAgainstContract, createContractCache, needsContract } from './contract-check.js';
import { type OrderInput, plannedSubOrders } from './request.js';

const WHOLESALER: ResolvedWholesaler = {
  id: 'phoenix',
  name: 'Phoenix',
  version: 2,
  route: 'live',
  endpoint: { target: 'phoenix', baseUrl: 'http://127.0.0.1:9', version: 2 },
  custom: null,
};

function contract(overrides: Partial<ContractDataResponse['orderTypes']> = {}): ContractDataResponse {
  return {
    customerId: 'apotheke1',
    automaticRetrieval: false,
    orderWindows: [],
    orderTypes: {
      NORMAL: { maxFreeOrderLabels: 5 },
      STAPEL: { maxFreeOrderLabels: 1, agreed: true },
      SONDER: { maxFreeOrderLabels: 1, agreed: true },
      VERSAND: { maxFreeOrderLabels: 1, agreed: false, completeContainersOnly: false },
      ...overrides,
    },
    substitutionAgreed: true,
    specificAvailabilityAgreed: true,
    bulkAvailabilityAgreed: true,
    takeBackOffersAgreed: true,
    specialDays: [],
  };
}

const items = [{ pzn: '04114918', quantity: 1 }];
const plan = (input: OrderInput) => plannedSubOrders(input, WHOLESALER, 500);

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('checkAgainstContract', () => {
  it('needs no contract for normal sub-orders with default labels', () => {
    expect(needsContract(plan({ items }))).toBe(false);
    expect(needsContract(plan({ order_label: 'K1', items }))).toBe(false);
    expect(needsContract(plan({ order_label: 'KUEHL', items }))).toBe(true);
    expect(needsContract(plan({ order_type: 'batch', items }))).toBe(true);
  });

  it('refuses a type the contract does not agree, naming the sub-order', () => {
    const error = refusal(() =>
      checkAgainstContract(
        contract(),
        plan({ sub_orders: [{ items }, { order_type: 'shipping', container_id: 'KISTE7', items }] }),
        'phoenix',
      ),
    );
    expect(error).toMatchObject({
      kind: 'order_type_not_agreed',
      options: { param: 'sub_orders[1].order_type' },
    });
    expect(error.message).toMatch(/sub_orders\[1\] is a shipping order \(VERSAND\)/);
    expect(() =>
      checkAgainstContract(
        contract({ VERSAND: { maxFreeOrderLabels: 1, agreed: true, completeContainersOnly: false } }),
        plan({ order_type: 'shipping', container_id: 'KISTE7', items }),
        'phoenix',
      ),
    ).not.toThrow();
  });

  it('counts distinct labels of the client’s own choosing per type against the limit', () => {
    const batch = (order_label?: string) => ({
      order_type: 'batch' as const,
      ...(order_label ? { order_label } : {}),
      items,
    });
    expect(() =>
      checkAgainstContract(contract(), plan({ sub_orders: [batch('A'), batch('A'), batch()] }), 'phoenix'),
    ).not.toThrow();
    const error = refusal(() =>
      checkAgainstContract(contract(), plan({ sub_orders: [batch('A'), batch(), batch('B')] }), 'phoenix'),
    );
    expect(error).toMatchObject({
      kind: 'order_labels_exceeded',
      options: { param: 'sub_orders[2].order_label' },
    });
    expect(error.message).toMatch(/2 order labels of their own \(A, B\); .* allows 1 for batch orders/);
    // Each type has its own count: five normal labels are fine.
    const normal = ['A', 'B', 'C', 'D', 'E'].map((order_label) => ({ order_label, items }));
    expect(() => checkAgainstContract(contract(), plan({ sub_orders: normal }), 'phoenix')).not.toThrow();
  });

  it('keeps shipping containers complete where the contract says so', () => {
    const complete = contract({
      VERSAND: { maxFreeOrderLabels: 2, agreed: true, completeContainersOnly: true },
    });
    const ship = (container_id: string, delivery_preference?: 'backorder') => ({
      order_type: 'shipping' as const,
      container_id,
      items: [{ pzn: '04114918', quantity: 1, ...(delivery_preference ? { delivery_preference } : {}) }],
    });
    expect(() =>
      checkAgainstContract(complete, plan({ sub_orders: [ship('K1'), ship('K2')] }), 'phoenix'),
    ).not.toThrow();
    expect(
      refusal(() => checkAgainstContract(complete, plan({ sub_orders: [ship('K1'), ship('K1')] }), 'phoenix'))
        .options.param,
    ).toBe('sub_orders[1].container_id');
    expect(
      refusal(() =>
        checkAgainstContract(complete, plan({ sub_orders: [ship('K1', 'backorder')] }), 'phoenix'),
      ),
    ).toMatchObject({
      kind: 'complete_containers_only',
      options: { param: 'sub_orders[0].items[0].delivery_preference' },
    });
  });
});

describe('the contract cache', () => {
  function upstream() {
    let reads = 0;
    const client: Msv3Client = {
      async call() {
        reads += 1;
        return { ok: true, value: contract(), latencyMs: 1 } as never;
      },
    };
    const registry = { list: async () => [], resolve: async () => WHOLESALER };
    return { deps: { registry, client, customClient: client, clientSoftwareId: 'test' }, reads: () => reads };
  }

  it('reuses a contract for the same login until the time runs out, and never for another password', async () => {
    const clock = manualClock();
    const cache = createContractCache({ clock, ttlMs: 60_000 });
    const u = upstream();
    const login = createCredentials('apotheke1', 'geheim');
    await cache.contractFor(u.deps, WHOLESALER, login);
    await cache.contractFor(u.deps, WHOLESALER, createCredentials('apotheke1', 'geheim'));
    expect(u.reads()).toBe(1);
    await cache.contractFor(u.deps, WHOLESALER, createCredentials('apotheke1', 'other'));
    expect(u.reads()).toBe(2);
    clock.advance(60_000);
    await cache.contractFor(u.deps, WHOLESALER, login);
    expect(u.reads()).toBe(3);
  });

  it('reads every time with a time of 0', async () => {
    const cache = createContractCache({ clock: manualClock(), ttlMs: 0 });
    const u = upstream();
    const login = createCredentials('apotheke1', 'geheim');
    await cache.contractFor(u.deps, WHOLESALER, login);
    await cache.contractFor(u.deps, WHOLESALER, login);
    expect(u.reads()).toBe(2);
  });
});
