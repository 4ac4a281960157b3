import { randomUUID } from 'node:crypto';
import { until } from './until.js';

/**
 * The gateway's sandbox through its HTTP API, for the process tests of the sandbox's stored state
 * (test/sandbox-restart.test.ts, test/sandbox-shared.test.ts): a `pk_test_` key, wholesaler `phoenix`.
 */

interface Delivery {
  tracking_number: string;
  document_id: string;
}

export function sandboxApi(url: string, key: string) {
  const headers = {
    'x-api-key': key,
    'x-msv3-username': 'apotheke1',
    'x-msv3-password': 'sandbox-secret',
  };
  const get = async (path: string) => {
    const response = await fetch(`${url}${path}`, { headers });
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  const post = async (path: string, body: unknown, extra: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { ...headers, ...extra, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const deliveries = async () =>
    ((await (await get('/v1/deliveries?wholesaler=phoenix')).json()) as { deliveries: Delivery[] })
      .deliveries;
  return {
    async order(items: { pzn: string; quantity: number }[]): Promise<string> {
      const placed = await post(
        '/v1/orders',
        { wholesaler: 'phoenix', items },
        { 'idempotency-key': randomUUID() },
      );
      return placed.order_id as string;
    },
    status: async (orderId: string) => (await get(`/v1/orders/${orderId}/status?wholesaler=phoenix`)).json(),
    deliveries,
    history: async () => (await get('/v1/deliveries/history?wholesaler=phoenix')).json(),
    confirm: (trackingNumbers: string[]) =>
      post('/v1/deliveries/confirm', { wholesaler: 'phoenix', tracking_numbers: trackingNumbers }),
    pdf: async (documentId: string) =>
      Buffer.from(await (await get(`/v1/documents/${documentId}?wholesaler=phoenix`)).arrayBuffer()),
    /** `order.status_changed` events of the feed (newest first), as type, order and status. */
    async statusEvents(): Promise<{ order_id: string; status: string }[]> {
      const feed = (await (await get('/v1/events?limit=100')).json()) as {
        events: { type: string; data: { order_id: string; status: string } }[];
      };
      return feed.events
        .filter((e) => e.type === 'order.status_changed')
        .map((e) => ({ order_id: e.data.order_id, status: e.data.status }));
    },
    /** The first delivery listed whose tracking number is not in `known`, once there is one. */
    newDelivery: (known: readonly string[]) =>
      until(
        'a new delivery notice',
        async () => (await deliveries()).find((d) => !known.includes(d.tracking_number)),
        10_000,
      ),
  };
}
