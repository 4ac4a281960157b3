import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/lib/clock.js';
import { type MockWholesaler, type MockWholesalerOptions, startMockWholesaler } from '../src/mock/index.js';
import { createAccount } from '../src/store/accounts.js';
import { createApiKey } from '../src/store/api-keys.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { closedLoopbackUrl } from './closed-port.js';
import { type GatewayProcess, killAndWait, startGatewayProcess } from './gateway-process.js';

/**
 * A real gateway process (`src/cli.ts serve`, SQLite in a temporary folder) in front of two live
 * wholesalers for the operator's view: `phoenix` at a mock wholesaler in this process, and `offline`, a
 * loopback port where nothing listens. `liveKey` is a pharmacy's live API key.
 */
export interface ObservedGateway {
  gateway: GatewayProcess;
  mock: MockWholesaler;
  liveKey: string;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export async function startObservedGateway(
  env: NodeJS.ProcessEnv,
  options: { mock?: MockWholesalerOptions; startTimeoutMs?: number } = {},
): Promise<ObservedGateway> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-observed-'));
  const children: ChildProcess[] = [];
  const mock = await startMockWholesaler(options.mock ?? {});
  const cleanUp = async () => {
    await Promise.all(children.splice(0).map(killAndWait));
    await mock.close();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const databaseUrl = `sqlite:${join(folder, 'gateway.db')}`;
    const database = await openDatabase(databaseUrl);
    let liveKey: string;
    try {
      await migrateToLatest(database);
      const account = await createAccount(database.db, systemClock, { name: 'Observed pharmacy' });
      liveKey = (
        await createApiKey(database.db, systemClock, { accountId: account.id, name: 'live', mode: 'live' })
      ).secret;
    } finally {
      await database.close();
    }
    const catalogue = join(folder, 'wholesalers.json');
    writeFileSync(
      catalogue,
      JSON.stringify({
        wholesalers: [
          {
            id: 'phoenix',
            name: 'PHOENIX',
            version: 2,
            live: { baseUrl: mock.baseUrl({ tenant: 'live/phoenix' }) },
          },
          {
            id: 'offline',
            name: 'Offline',
            version: 2,
            live: { baseUrl: `${await closedLoopbackUrl()}/msv3/v2.0` },
          },
        ],
      }),
    );
    const gateway = await startGatewayProcess(
      {
        PATH: process.env.PATH,
        DATABASE_URL: databaseUrl,
        PORT: '0',
        LOG_LEVEL: 'info',
        CREATE_FIRST_KEY: 'false',
        WHOLESALER_CATALOGUE: catalogue,
        ...env,
      },
      children,
      options.startTimeoutMs ?? 90_000,
    );
    return { gateway, mock, liveKey, close: cleanUp };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** One request on a connection of its own (so a cluster's workers take turns). */
export function send(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: options.method ?? 'GET',
        agent: false,
        headers: {
          ...options.headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
