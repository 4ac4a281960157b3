import { randomUUID } from 'node:crypto';
import { createCredentials } from '../src/msv3/credentials.js';
import { normalisePzn } from '../src/msv3/model.js';
import { bestellen } from '../src/msv3/operations/bestellen.js';
import type { Gateway, TestKey } from './gateway.js';
import { TEST_CREDENTIALS } from './gateway.js';

/**
 * Places an order at the sandbox mock straight through the gateway's MSV3 client (`bestellen`), so that
 * delivery notices exist for the tests of deliveries, returns and documents without depending on the
 * orders endpoint. The mock issues the notices as soon as the order is processed.
 */
export async function placeSandboxOrder(
  gw: Gateway,
  items: { pzn: string; quantity: number }[],
  options: { key?: TestKey; credentials?: { username: string; password: string }; wholesaler?: string } = {},
): Promise<void> {
  const key = options.key ?? gw.keys.test;
  const credentials = options.credentials ?? TEST_CREDENTIALS;
  const wholesaler = await gw.deps.upstream.registry.resolve(
    { accountId: key.accountId, mode: key.mode },
    options.wholesaler ?? 'phoenix',
  );
  const result = await gw.deps.upstream.client.call(
    bestellen,
    wholesaler.endpoint,
    createCredentials(credentials.username, credentials.password),
    {
      clientSoftwareId: 'msv3-gateway tests',
      id: randomUUID(),
      supportId: 1,
      subOrders: [
        {
          id: randomUUID(),
          orderType: 'NORMAL',
          orderLabel: 'K1',
          supportId: 1,
          positions: items.map((i) => ({
            pzn: normalisePzn(i.pzn),
            quantity: i.quantity,
            deliveryInstruction: 'Normal' as const,
          })),
        },
      ],
    },
  );
  if (!result.ok) throw new Error(`sandbox order failed: ${JSON.stringify(result.error)}`);
}
