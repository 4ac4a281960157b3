import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../../test/app.js';
import { describeEachDialect } from '../../../test/db.js';
import type { HostLookup } from '../../lib/address-policy.js';
import { manualClock } from '../../lib/clock.js';
import { createApiKey } from '../../store/api-keys.js';
import { recordEvent } from '../../webhooks/events/record.js';
import { sampleNotice } from '../../webhooks/test-support/fixtures.js';
import { type Receiver, startReceiver } from '../../webhooks/test-support/receiver.js';
import { verifyWebhook } from '../../webhooks/verify.js';
import type { AppDeps } from '../app-deps.js';
import type { GatewayApp } from '../types.js';

const HOUR = 3_600_000;
/** `*.example` names resolve to a public address, `rebind.example` to loopback, `imds.example` to the
 * metadata service; no real DNS. */
const NAMED: Record<string, string> = { 'rebind.example': '127.0.0.1', 'imds.example': '169.254.169.254' };
const lookup: HostLookup = async (host) => [{ address: NAMED[host] ?? '93.184.216.34', family: 4 }];

describeEachDialect('webhook routes', (getDatabase) => {
  const clock = manualClock();
  let app: GatewayApp;
  let deps: AppDeps;
  let strictApp: GatewayApp;
  let listedApp: GatewayApp;
  let receiver: Receiver;
  let key: string;
  let otherAccountKey: string;
  let liveKeySameAccount: string;

  beforeAll(async () => {
    const database = getDatabase();
    const env = { RATE_LIMIT_TEST_POINTS: '100000', RATE_LIMIT_LIVE_POINTS: '100000' };
    ({ app, deps } = await buildTestApp(database, {
      env: { ...env, ALLOW_PRIVATE_ENDPOINTS: 'true' },
      clock,
      lookup,
    }));
    ({ app: strictApp } = await buildTestApp(database, { env, clock, lookup }));
    ({ app: listedApp } = await buildTestApp(database, {
      env: { ...env, ALLOWED_PRIVATE_CIDRS: '127.0.0.0/30' },
      clock,
      lookup,
    }));
    receiver = await startReceiver();
    const mine = await createTestKey(database);
    key = mine.secret;
    otherAccountKey = (await createTestKey(database)).secret;
    liveKeySameAccount = (
      await createApiKey(database.db, clock, { accountId: mine.accountId, name: 'live', mode: 'live' })
    ).secret;
  });
  beforeEach(() => receiver.answer(() => ({ status: 200 })));
  afterAll(async () => {
    await app.close();
    await strictApp.close();
    await listedApp.close();
    await deps.webhooks.close({ timeoutMs: 0 });
    await receiver.close();
  });

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    options: { body?: unknown; apiKey?: string; on?: GatewayApp; headers?: Record<string, string> } = {},
  ) =>
    (options.on ?? app).inject({
      method,
      url,
      headers: { 'x-api-key': options.apiKey ?? key, ...options.headers },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });

  async function createWebhook(body: Record<string, unknown> = {}, apiKey = key) {
    const response = await call('POST', '/v1/webhooks', {
      apiKey,
      body: { url: receiver.url, wholesaler: 'phoenix', events: ['delivery.received'], ...body },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  }

  it('creates a subscription: 201 with the full secret, this once', async () => {
    const response = await call('POST', '/v1/webhooks', {
      body: {
        url: receiver.url,
        wholesaler: 'phoenix',
        events: ['delivery.received', 'delivery.shortage', 'delivery.received'],
      },
    });
    expect(response.statusCode).toBe(201);
    const created = response.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^whk_[0-9A-Za-z]{22}$/),
      url: receiver.url,
      wholesaler: 'phoenix',
      events: ['delivery.received', 'delivery.shortage'],
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      active: true,
      disabled_reason: null,
      livemode: false,
      previous_secret_expires_at: null,
      created_at: new Date(clock.now()).toISOString(),
      updated_at: new Date(clock.now()).toISOString(),
    });
    expect(Buffer.from(created.signing_secret.slice(6), 'base64')).toHaveLength(32);

    const listed = (await call('GET', '/v1/webhooks')).json();
    const mine = listed.webhooks.find((w: { id: string }) => w.id === created.id);
    expect(mine.signing_secret).toBe(`whsec_****${created.signing_secret.slice(-4)}`);
    const one = (await call('GET', `/v1/webhooks/${created.id}`)).json();
    expect(one).toEqual({ ...created, signing_secret: mine.signing_secret });
  });

  it('lists only the subscriptions of the calling account and mode, in a `webhooks` wrapper', async () => {
    const mine = await createWebhook();
    const theirs = await createWebhook({}, otherAccountKey);
    const live = await createWebhook({ url: 'https://pharmacy.example/hooks' }, liveKeySameAccount);
    const ids = (r: { json(): { webhooks: { id: string }[] } }) => r.json().webhooks.map((w) => w.id);
    const listed = await call('GET', '/v1/webhooks');
    expect(Object.keys(listed.json())).toEqual(['webhooks']);
    expect(ids(listed)).toContain(mine.id);
    expect(ids(listed)).not.toContain(theirs.id);
    expect(ids(listed)).not.toContain(live.id);
    expect(ids(await call('GET', '/v1/webhooks', { apiKey: liveKeySameAccount }))).toEqual([live.id]);
    expect(live.livemode).toBe(true);
  });

  it('answers 404 webhook_not_found on every route for another account’s or mode’s subscription', async () => {
    const webhook = await createWebhook();
    await recordEvent(
      deps.database.db,
      {
        accountId: (await accountOf(key)).accountId,
        mode: 'test',
        type: 'delivery.received',
        wholesaler: 'phoenix',
        data: sampleNotice,
      },
      { clock },
    );
    await deps.webhooks.worker.drain();
    const delivery = (await call('GET', `/v1/webhooks/${webhook.id}/deliveries`)).json().deliveries[0];
    expect(delivery).toBeDefined();
    const routes: [Parameters<typeof call>[0], string, unknown?][] = [
      ['GET', `/v1/webhooks/${webhook.id}`],
      ['PATCH', `/v1/webhooks/${webhook.id}`, { active: false }],
      ['DELETE', `/v1/webhooks/${webhook.id}`],
      ['POST', `/v1/webhooks/${webhook.id}/test`],
      ['GET', `/v1/webhooks/${webhook.id}/deliveries`],
      ['POST', `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`],
      ['POST', `/v1/webhooks/${webhook.id}/rotate-secret`],
    ];
    const sentBefore = receiver.requests.length;
    for (const apiKey of [otherAccountKey, liveKeySameAccount]) {
      for (const [method, url, body] of routes) {
        const response = await call(method, url, { apiKey, body });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(response.json()).toMatchObject({ error: 'webhook_not_found', error_code: '1204' });
      }
    }
    expect(receiver.requests.length).toBe(sentBefore);
    expect((await call('GET', `/v1/webhooks/${webhook.id}`)).json()).toMatchObject({ active: true });
  });

  it('deletes with 204, then 404', async () => {
    const webhook = await createWebhook();
    const deleted = await call('DELETE', `/v1/webhooks/${webhook.id}`);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await call('DELETE', `/v1/webhooks/${webhook.id}`)).statusCode).toBe(404);
    expect((await call('GET', `/v1/webhooks/${webhook.id}`)).json().error).toBe('webhook_not_found');
  });

  it('names an unknown event in a 400', async () => {
    const response = await call('POST', '/v1/webhooks', {
      body: { url: receiver.url, wholesaler: 'phoenix', events: ['delivery.received', 'order.shipped'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: 'invalid_request',
      param: 'events[1]',
      message:
        '`events[1]` must be one of: delivery.received, delivery.shortage, order.status_changed, order.fulfilled, wholesaler.status_changed, *.',
    });
  });

  it('accepts `*` for every wholesaler and every event, without resolving a wholesaler id', async () => {
    const response = await call('POST', '/v1/webhooks', {
      body: { url: receiver.url, wholesaler: '*', events: ['order.status_changed', '*'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ wholesaler: '*', events: ['*'] });
    const changed = await call('PATCH', `/v1/webhooks/${response.json().id}`, {
      body: { events: ['delivery.shortage', 'delivery.shortage'] },
    });
    expect(changed.json()).toMatchObject({ wholesaler: '*', events: ['delivery.shortage'] });
    const partial = await call('POST', '/v1/webhooks', {
      body: { url: receiver.url, wholesaler: 'phoen*', events: ['*'] },
    });
    expect(partial.statusCode).toBe(400);
    expect(partial.json()).toMatchObject({ param: 'wholesaler' });
  });

  it.each([
    [{ events: [] }, 'events'],
    [{ wholesaler: '' }, 'wholesaler'],
    [{ wholesaler: 'Phoenix AG' }, 'wholesaler'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'ftp://pharmacy.example/' }, 'url'],
    [{ extra: true }, 'extra'],
  ])('refuses %j with 400 invalid_request naming %s', async (change, param) => {
    const response = await call('POST', '/v1/webhooks', {
      body: { url: receiver.url, wholesaler: 'phoenix', events: ['delivery.received'], ...change },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request', param });
  });

  it('accepts only wholesaler ids the key can use: 404 wholesaler_not_found for others', async () => {
    const refused = async (wholesaler: string, apiKey = key) => {
      const response = await call('POST', '/v1/webhooks', {
        apiKey,
        body: { url: receiver.url, wholesaler, events: ['wholesaler.status_changed'] },
      });
      expect({ wholesaler, status: response.statusCode }).toEqual({ wholesaler, status: 404 });
      expect(response.json()).toMatchObject({ error: 'wholesaler_not_found', wholesaler });
    };
    await refused('nobody');
    await refused('phoenix_test'); // the shipped catalogue has no test servers
    await refused('aep', liveKeySameAccount); // sandbox-only: no live endpoint
    const custom = await call('POST', '/v1/wholesalers/custom', {
      body: { name: 'Hausapotheke Nord', endpoint: 'https://93.184.216.34/msv3/v2.0' },
    });
    const { id } = custom.json().wholesaler;
    expect((await createWebhook({ wholesaler: id, events: ['wholesaler.status_changed'] })).wholesaler).toBe(
      id,
    );
    expect((await createWebhook({ wholesaler: `${id}_test` })).wholesaler).toBe(`${id}_test`);
    await refused(id, otherAccountKey);
    await refused(id, liveKeySameAccount);
  });

  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://[::ffff:127.0.0.1]/hooks',
    'http://2130706433/hooks',
    'https://rebind.example/hooks',
    'http://169.254.169.254/latest/meta-data/',
  ])('refuses %s with 400 endpoint_not_allowed by default', async (url) => {
    const response = await call('POST', '/v1/webhooks', {
      on: strictApp,
      body: { url, wholesaler: 'phoenix', events: ['delivery.received'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: 'endpoint_not_allowed',
      error_code: '1004',
      param: 'url',
    });
  });

  it('accepts loopback receivers with ALLOW_PRIVATE_ENDPOINTS, plain http included for live keys', async () => {
    expect((await createWebhook({ url: 'http://127.0.0.1:8080/hooks' })).url).toBe(
      'http://127.0.0.1:8080/hooks',
    );
    expect((await createWebhook({ url: 'http://127.0.0.1:8080/hooks' }, liveKeySameAccount)).livemode).toBe(
      true,
    );
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/hooks',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://[::ffff:169.254.169.254]/hooks',
    'http://imds.example/hooks',
  ])('refuses %s with 400 endpoint_not_allowed although private endpoints are allowed', async (url) => {
    const response = await call('POST', '/v1/webhooks', {
      body: { url, wholesaler: 'phoenix', events: ['delivery.received'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'endpoint_not_allowed', param: 'url' });
  });

  it('refuses a name that resolves to a private address without saying what it resolved to', async () => {
    for (const host of ['rebind.example', 'imds.example']) {
      const response = await call('POST', '/v1/webhooks', {
        on: strictApp,
        body: { url: `https://${host}/hooks`, wholesaler: 'phoenix', events: ['delivery.received'] },
      });
      expect(response.json()).toMatchObject({
        error: 'endpoint_not_allowed',
        message: `The host name ${host} does not resolve to an address this gateway calls: public addresses only.`,
      });
    }
  });

  it('with ALLOWED_PRIVATE_CIDRS accepts a receiver inside the listed range and refuses one outside', async () => {
    const create = (url: string) =>
      call('POST', '/v1/webhooks', {
        on: listedApp,
        body: { url, wholesaler: 'phoenix', events: ['delivery.received'] },
      });
    const inside = await create('http://127.0.0.1:8080/hooks');
    expect(inside.statusCode).toBe(201);
    await call('DELETE', `/v1/webhooks/${inside.json().id}`);
    const outside = await create('http://127.0.0.5:8080/hooks');
    expect(outside.statusCode).toBe(400);
    expect(outside.json()).toMatchObject({ error: 'endpoint_not_allowed', param: 'url' });
  });

  it('needs https for live keys towards public hosts', async () => {
    const response = await call('POST', '/v1/webhooks', {
      apiKey: liveKeySameAccount,
      body: { url: 'http://pharmacy.example/hooks', wholesaler: 'phoenix', events: ['delivery.received'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: 'endpoint_not_allowed',
      message: 'Live mode needs an https URL.',
    });
  });

  it('sends a signed ping on POST /test and logs it, without touching the subscription', async () => {
    const webhook = await createWebhook();
    const before = receiver.requests.length;
    const response = await call('POST', `/v1/webhooks/${webhook.id}/test`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      delivery_id: expect.stringMatching(/^whd_/),
      event_id: expect.stringMatching(/^evt_/),
      attempt: 1,
      success: true,
      status_code: 200,
      error_class: null,
      next_attempt_at: null,
      subscription_disabled: false,
    });
    const ping = receiver.requests[before]!;
    const event = verifyWebhook(ping.body, ping.headers, webhook.signing_secret, {
      scheme: 'both',
      now: () => clock.now(),
    });
    expect(event).toMatchObject({
      type: 'ping',
      data: { webhook_id: webhook.id },
      livemode: false,
      wholesaler: 'phoenix',
    });
    expect(ping.headers['x-msv3-event']).toBe('ping');

    receiver.answer(() => ({ status: 410 }));
    clock.advance(1);
    const failed = (await call('POST', `/v1/webhooks/${webhook.id}/test`)).json();
    expect(failed).toMatchObject({
      success: false,
      status_code: 410,
      error_class: 'gone',
      subscription_disabled: false,
    });
    expect((await call('GET', `/v1/webhooks/${webhook.id}`)).json().active).toBe(true);

    const log = (await call('GET', `/v1/webhooks/${webhook.id}/deliveries`)).json();
    expect(
      log.deliveries.map((d: { event_type: string; status: string }) => [d.event_type, d.status]),
    ).toEqual([
      ['ping', 'failed'],
      ['ping', 'delivered'],
    ]);
    expect(log.deliveries[0].attempts[0]).toMatchObject({
      trigger: 'test',
      success: false,
      status_code: 410,
      error_class: 'gone',
    });
  });

  it('pages the delivery log and retries a delivery on request', async () => {
    const webhook = await createWebhook({ wholesaler: 'noweda' });
    const scope = await accountOf(key);
    receiver.answer(() => ({ status: 500 }));
    for (let i = 0; i < 3; i++) {
      await recordEvent(
        deps.database.db,
        { ...scope, type: 'delivery.received', wholesaler: 'noweda', data: sampleNotice },
        { clock },
      );
      clock.advance(1);
    }
    await deps.webhooks.worker.drain();

    const first = (await call('GET', `/v1/webhooks/${webhook.id}/deliveries?limit=2`)).json();
    expect(first.deliveries).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const rest = (
      await call(
        'GET',
        `/v1/webhooks/${webhook.id}/deliveries?limit=2&starting_after=${first.deliveries[1].id}`,
      )
    ).json();
    expect(rest).toMatchObject({ has_more: false, deliveries: [{ status: 'pending' }] });
    const failedOne = first.deliveries[0];
    expect(failedOne).toMatchObject({
      status: 'pending',
      attempt_count: 1,
      last_status_code: 500,
      last_error: 'HTTP 500.',
      next_attempt_at: expect.any(String),
      attempts: [
        { attempt: 1, trigger: 'schedule', success: false, status_code: 500, error_class: 'http_status' },
      ],
    });

    receiver.answer(() => ({ status: 200 }));
    const retried = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${failedOne.id}/retry`);
    expect(retried.statusCode).toBe(200);
    expect(retried.json()).toMatchObject({
      delivery_id: failedOne.id,
      attempt: 2,
      success: true,
      next_attempt_at: null,
    });
    const again = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${failedOne.id}/retry`);
    expect(again.json()).toMatchObject({ attempt: 3, success: true });
    const shown = (await call('GET', `/v1/webhooks/${webhook.id}/deliveries?status=delivered`)).json();
    expect(shown.deliveries.map((d: { id: string }) => d.id)).toEqual([failedOne.id]);
    expect(shown.deliveries[0].attempts.map((a: { trigger: string }) => a.trigger)).toEqual([
      'manual',
      'manual',
      'schedule',
    ]);

    const unknown = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/whd_nope/retry`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'resource_not_found', param: 'delivery_id' });

    await deps.database.db
      .updateTable('webhook_deliveries')
      .set({ locked_by: 'someone-else', locked_until: clock.now() + 60_000 })
      .where('id', '=', failedOne.id)
      .execute();
    const busy = await call('POST', `/v1/webhooks/${webhook.id}/deliveries/${failedOne.id}/retry`);
    expect(busy.statusCode).toBe(409);
    expect(busy.json().error).toBe('conflict');
  });

  it('rotates the secret: the new one in full, both signing for 24 hours, then only the new one', async () => {
    const webhook = await createWebhook();
    const rotated = (await call('POST', `/v1/webhooks/${webhook.id}/rotate-secret`)).json();
    expect(rotated.signing_secret).toMatch(/^whsec_/);
    expect(rotated.signing_secret).not.toBe(webhook.signing_secret);
    expect(rotated.previous_secret_expires_at).toBe(new Date(clock.now() + 24 * HOUR).toISOString());

    const before = receiver.requests.length;
    await call('POST', `/v1/webhooks/${webhook.id}/test`);
    const during = receiver.requests[before]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(String(during.headers['x-msv3-signature']).split(' ')).toHaveLength(2);
    const now = () => clock.now();
    for (const secret of [rotated.signing_secret, webhook.signing_secret]) {
      expect(verifyWebhook(during.body, during.headers, secret, { scheme: 'both', now }).type).toBe('ping');
    }

    clock.advance(24 * HOUR);
    await call('POST', `/v1/webhooks/${webhook.id}/test`);
    const after = receiver.requests[before + 1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verifyWebhook(after.body, after.headers, webhook.signing_secret, { now })).toThrow(
      /No webhook-signature/,
    );
    expect(verifyWebhook(after.body, after.headers, rotated.signing_secret, { now }).type).toBe('ping');
    expect((await call('GET', `/v1/webhooks/${webhook.id}`)).json()).toMatchObject({
      previous_secret_expires_at: null,
      signing_secret: `whsec_****${rotated.signing_secret.slice(-4)}`,
    });
  });

  it('PATCH changes events and url, pauses and re-enables', async () => {
    const webhook = await createWebhook();
    const changed = await call('PATCH', `/v1/webhooks/${webhook.id}`, {
      body: { events: ['order.status_changed'], url: `${receiver.url}?v=2` },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({
      events: ['order.status_changed'],
      url: `${receiver.url}?v=2`,
      active: true,
    });
    const paused = (await call('PATCH', `/v1/webhooks/${webhook.id}`, { body: { active: false } })).json();
    expect(paused).toMatchObject({ active: false, disabled_reason: 'Disabled through the API.' });
    const resumed = (await call('PATCH', `/v1/webhooks/${webhook.id}`, { body: { active: true } })).json();
    expect(resumed).toMatchObject({ active: true, disabled_reason: null });
    expect((await call('PATCH', `/v1/webhooks/${webhook.id}`, { body: {} })).statusCode).toBe(400);
    expect(
      (await call('PATCH', `/v1/webhooks/${webhook.id}`, { body: { wholesaler: 'aep' } })).statusCode,
    ).toBe(400);
    const refused = await call('PATCH', `/v1/webhooks/${webhook.id}`, {
      on: strictApp,
      body: { url: 'http://10.0.0.1/hooks' },
    });
    expect(refused.json()).toMatchObject({ error: 'endpoint_not_allowed', param: 'url' });
  });

  it('replays a creation repeated with the same Idempotency-Key instead of creating a second one', async () => {
    const headers = { 'idempotency-key': `create-${Math.random()}` };
    const body = { url: receiver.url, wholesaler: 'aep', events: ['delivery.received'] };
    const first = await call('POST', '/v1/webhooks', { body, headers });
    const second = await call('POST', '/v1/webhooks', { body, headers });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json().id).toBe(first.json().id);
    expect(second.headers['idempotent-replayed']).toBe('true');
  });

  it('allows at most 50 subscriptions per account and mode', async () => {
    const { secret } = await createTestKey(getDatabase());
    for (let i = 0; i < 50; i++) await createWebhook({}, secret);
    const response = await call('POST', '/v1/webhooks', {
      apiKey: secret,
      body: { url: receiver.url, wholesaler: 'phoenix', events: ['delivery.received'] },
    });
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toBe('conflict');
  });

  async function accountOf(apiKey: string): Promise<{ accountId: string; mode: 'test' | 'live' }> {
    const whoami = await call('GET', '/v1/webhooks', { apiKey });
    expect(whoami.statusCode).toBe(200);
    const row = await deps.database.db
      .selectFrom('api_keys')
      .select(['account_id', 'mode'])
      .where('prefix', '=', apiKey.slice(0, 12))
      .executeTakeFirstOrThrow();
    return { accountId: row.account_id, mode: row.mode };
  }
});
