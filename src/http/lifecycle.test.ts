import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/until.js';
import { installLifecycle } from './lifecycle.js';
import type { GatewayApp } from './types.js';

/**
 * The drain's bookkeeping on a bare Fastify app with one route that answers only when a test lets it:
 * real HTTP requests, so that the raw server's `request` events are what is counted.
 */
async function gatedApp() {
  const app = Fastify() as unknown as GatewayApp;
  installLifecycle(app);
  const waiting: (() => void)[] = [];
  app.get('/held', () => new Promise((resolve) => waiting.push(() => resolve({ ok: true }))));
  app.get('/quick', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = typeof address === 'object' && address !== null ? `http://127.0.0.1:${address.port}` : '';
  return { app, url, waiting };
}

/** Resolves to true once `promise` has settled; lets a test ask "already?" without waiting. */
function watch(promise: Promise<unknown>): () => boolean {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  return () => settled;
}

describe('draining', () => {
  let app: GatewayApp | undefined;
  let held: (() => void)[] = [];
  afterEach(async () => {
    for (const release of held) release(); // a failed test must not leave requests holding close
    held = [];
    await app?.close();
    app = undefined;
  });

  it('is done at once when nothing is in flight, also after answered requests', async () => {
    const gated = await gatedApp();
    app = gated.app;
    for (let i = 0; i < 3; i++) expect((await fetch(`${gated.url}/quick`)).status).toBe(200);
    await gated.app.drain();
    expect(gated.app.isDraining()).toBe(true);
  });

  it('waits for every request in flight when it began, and for no request that came later', async () => {
    const gated = await gatedApp();
    app = gated.app;
    held = gated.waiting;
    const first = fetch(`${gated.url}/held`);
    const second = fetch(`${gated.url}/held`);
    await until('two requests held', () => gated.waiting.length === 2, 5_000);

    const drained = watch(gated.app.drain());
    const drainedAgain = watch(gated.app.drain());
    // A request that arrives while draining is refused and does not hold the drain open.
    expect((await fetch(`${gated.url}/quick`)).status).not.toBe(200);

    gated.waiting[0]!();
    expect((await first).status).toBe(200);
    expect(drained()).toBe(false);
    expect(drainedAgain()).toBe(false);

    gated.waiting[1]!();
    expect((await second).status).toBe(200);
    await until('both drains done', () => drained() && drainedAgain(), 5_000);
  });
});
