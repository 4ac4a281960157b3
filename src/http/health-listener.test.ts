import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/until.js';
import { type HealthListener, startHealthListener } from './health-listener.js';
import type { Readiness } from './readiness.js';

const FAST = { checkEveryMs: 50, readinessStaleMs: 400, livenessStaleMs: 600 };

describe('health probes on a port of their own (HEALTH_PORT)', () => {
  let listener: HealthListener | undefined;
  afterEach(async () => {
    await listener?.close();
    listener = undefined;
  });

  async function start(check: () => Promise<Readiness>): Promise<HealthListener> {
    listener = await startHealthListener({
      host: '127.0.0.1',
      port: 0,
      backlog: 511,
      checkReadiness: check,
      timing: FAST,
    });
    return listener;
  }

  async function get(url: string, method = 'GET') {
    const response = await fetch(url, { method });
    return {
      status: response.status,
      headers: response.headers,
      body: method === 'HEAD' ? undefined : ((await response.json()) as Record<string, unknown>),
    };
  }

  it('answers liveness and readiness as the routes on PORT do, from the readiness the gateway reports', async () => {
    let readiness: Readiness = { problems: [], webhookWorker: 'running' };
    const { url } = await start(async () => readiness);
    expect(await get(`${url}/v1/health`)).toMatchObject({
      status: 200,
      body: { status: 'ok', version: '0.1.0' },
    });
    const ready = await until(
      'ready',
      async () => ((await get(`${url}/v1/health/ready`)).status === 200 ? true : undefined),
      5_000,
    );
    expect(ready).toBe(true);
    expect((await get(`${url}/v1/health/ready`)).body).toEqual({
      status: 'ready',
      version: '0.1.0',
      checks: { database: 'ok', migrations: 'ok', webhook_worker: 'running' },
    });
    expect((await get(`${url}/v1/health/ready`, 'HEAD')).status).toBe(200);

    readiness = { problems: ['the database does not answer'], webhookWorker: 'running' };
    const notReady = await until(
      'not ready',
      async () => {
        const answer = await get(`${url}/v1/health/ready`);
        return answer.status === 503 ? answer : undefined;
      },
      5_000,
    );
    expect(notReady.headers.get('retry-after')).toBe('5');
    expect(notReady.body).toMatchObject({
      error: 'service_unavailable',
      message: 'Not ready: the database does not answer.',
      wholesaler: null,
      error_code: '1901',
      request_id: notReady.headers.get('x-request-id'),
    });
  });

  it('says not ready at once when the drain begins, and stays live', async () => {
    const { url, draining } = await start(async () => ({ problems: [], webhookWorker: 'disabled' }));
    await until(
      'ready',
      async () => ((await get(`${url}/v1/health/ready`)).status === 200 ? true : undefined),
      5_000,
    );
    draining();
    const answer = await until(
      'draining seen',
      async () => {
        const a = await get(`${url}/v1/health/ready`);
        return a.status === 503 ? a : undefined;
      },
      1_000,
    );
    expect(answer.body).toMatchObject({ message: 'Not ready: the gateway is shutting down.' });
    expect((await get(`${url}/v1/health`)).status).toBe(200);
  });

  it('fails readiness, then liveness, when the gateway stops answering its checks', async () => {
    let answering = true;
    const { url } = await start(() =>
      answering
        ? Promise.resolve({ problems: [], webhookWorker: 'running' })
        : new Promise<Readiness>(() => {}),
    );
    await until(
      'ready',
      async () => ((await get(`${url}/v1/health/ready`)).status === 200 ? true : undefined),
      5_000,
    );
    answering = false;
    const stale = await until(
      'readiness stale',
      async () => {
        const a = await get(`${url}/v1/health/ready`);
        return a.status === 503 ? a : undefined;
      },
      5_000,
    );
    expect(stale.body?.message).toMatch(/^Not ready: no readiness check finished for \d+ s\.$/);
    const dead = await until(
      'liveness stale',
      async () => {
        const a = await get(`${url}/v1/health`);
        return a.status === 503 ? a : undefined;
      },
      5_000,
    );
    expect(dead.body?.message).toMatch(/^The gateway has not answered for \d+ s\.$/);
  });

  it('answers other paths and methods in the error shape', async () => {
    const { url } = await start(async () => ({ problems: [], webhookWorker: 'running' }));
    expect(await get(`${url}/v1/wholesalers`)).toMatchObject({
      status: 404,
      body: { error: 'route_not_found' },
    });
    expect(await get(`${url}/v1/health`, 'POST')).toMatchObject({
      status: 405,
      body: { error: 'method_not_allowed' },
    });
  });

  it('fails to start, naming the cause, when the port is taken', async () => {
    const taken = await start(async () => ({ problems: [], webhookWorker: 'running' }));
    const port = Number(new URL(taken.url).port);
    await expect(
      startHealthListener({
        host: '127.0.0.1',
        port,
        backlog: 511,
        checkReadiness: async () => ({ problems: [], webhookWorker: 'running' }),
      }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
