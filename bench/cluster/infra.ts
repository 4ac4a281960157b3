import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import pg from 'pg';

/** The benchmark's private infrastructure: a scratch database, its own Redis, a webhook receiver. */

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `bench_cluster_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: `postgres://postgres@127.0.0.1:5432/${name}`,
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        // FORCE ends only this database's own connections (left by a killed gateway).
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface OwnRedis {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `redis-server` on a free loopback port, nothing saved; resolves once it accepts connections. */
export async function startOwnRedis(startTimeoutMs = 30_000): Promise<OwnRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(resolve, 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGKILL');
    });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`redis-server did not start:\n${output}`)),
        startTimeoutMs,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}):\n${output}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, child, stop };
}

export interface WebhookReceiver {
  url: string;
  /** `webhook-id` of every arrival, repeats included. */
  receivedIds: string[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receivedIds: string[] = [];
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receivedIds.push(String(req.headers['webhook-id']));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    receivedIds,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
