import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import type { HostLookup } from '../../lib/address-policy.js';
import { MAX_CUSTOM_WHOLESALERS } from '../../wholesalers/custom.js';

const PUBLIC_ENDPOINT = 'https://93.184.216.34/msv3/v2.0';

const register = (body: Record<string, unknown>, key: 'test' | 'live' | string = 'test') => ({
  url: '/v1/wholesalers/custom',
  body,
  key,
  credentials: null,
});

describeEachDialect('GET /v1/wholesalers and POST /v1/wholesalers/custom', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
  });
  afterAll(() => gw.close());

  const idsFor = async (key: 'test' | 'live' | string) => {
    const response = await gw.inject({ url: '/v1/wholesalers', key, credentials: null });
    expect(response.statusCode).toBe(200);
    return (response.json().wholesalers as { id: string; route: string }[]).map((w) => `${w.id}:${w.route}`);
  };

  it('lists the catalogue as the key sees it: sandbox and test servers for test keys, live endpoints for live keys', async () => {
    const fresh = await gw.createKey('test');
    expect(await idsFor(fresh.secret)).toEqual([
      'phoenix:sandbox',
      'phoenix_test:test_server',
      'gehe:sandbox',
      'gehe_test:test_server',
      'aep:sandbox',
      'offline:sandbox',
    ]);
    const freshLive = await gw.createKey('live');
    expect(await idsFor(freshLive.secret)).toEqual(['phoenix:live', 'gehe:live', 'offline:live']);
    const response = await gw.inject({ url: '/v1/wholesalers', credentials: null });
    expect(response.json().wholesalers[0]).toEqual({
      id: 'phoenix',
      name: 'PHOENIX (test catalogue)',
      verified: true,
      capabilities: expect.arrayContaining(['availability', 'order', 'contracts']),
      msv3_version: 2,
      route: 'sandbox',
    });
  });

  it('registers a custom endpoint with a readable, stable id, unverified and without capabilities', async () => {
    const key = await gw.createKey('live');
    const response = await gw.inject(
      register({ name: 'Hausapotheke Nord – Ölmühle', endpoint: `${PUBLIC_ENDPOINT}/` }, key.secret),
    );
    expect(response.statusCode).toBe(200);
    const { wholesaler } = response.json();
    expect(wholesaler).toEqual({
      id: expect.stringMatching(/^custom-hausapotheke-nord-oelmue-[0-9a-f]{6}$/),
      name: 'Hausapotheke Nord – Ölmühle',
      endpoint: PUBLIC_ENDPOINT,
      verified: false,
      capabilities: [],
      msv3_version: 2,
      route: 'live',
    });

    const again = await gw.inject(
      register({ name: 'Another name', endpoint: 'https://93.184.216.34:443/msv3/v2.0' }, key.secret),
    );
    expect(again.json().wholesaler).toEqual(wholesaler);
    expect((await idsFor(key.secret)).filter((id) => id.startsWith('custom-'))).toEqual([
      `${wholesaler.id}:live`,
    ]);
  });

  it(`refuses more than ${MAX_CUSTOM_WHOLESALERS} custom wholesalers per account and mode with 409`, async () => {
    const key = (await gw.createKey('test')).secret;
    const endpointNo = (i: number) => `https://93.184.216.34/msv3/v2.0/branch${i}`;
    for (let i = 0; i < MAX_CUSTOM_WHOLESALERS; i++) {
      const response = await gw.inject(register({ name: `Filiale ${i}`, endpoint: endpointNo(i) }, key));
      expect(response.statusCode).toBe(200);
    }
    const over = await gw.inject(register({ name: 'Eine zu viel', endpoint: endpointNo(-1) }, key));
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ error: 'conflict' });
    // Registering a known endpoint again still answers, and other accounts are not affected.
    expect((await gw.inject(register({ name: 'Filiale 0', endpoint: endpointNo(0) }, key))).statusCode).toBe(
      200,
    );
    expect((await gw.inject(register({ name: 'Andere', endpoint: endpointNo(-1) }))).statusCode).toBe(200);
  });

  it('keeps custom wholesalers to the account and mode that registered them', async () => {
    const mine = await gw.createKey('test');
    const other = await gw.createKey('test');
    const { wholesaler } = (
      await gw.inject(register({ name: 'Privat', endpoint: PUBLIC_ENDPOINT }, mine.secret))
    ).json();
    expect(await idsFor(mine.secret)).toEqual(
      expect.arrayContaining([`${wholesaler.id}:sandbox`, `${wholesaler.id}_test:test_server`]),
    );
    expect((await idsFor(other.secret)).some((id) => id.startsWith('custom-'))).toBe(false);

    const probe = await gw.inject({
      url: '/v1/connection/test',
      body: { wholesaler: wholesaler.id },
      key: other.secret,
    });
    expect(probe.statusCode).toBe(404);
    expect(probe.json()).toMatchObject({ error: 'wholesaler_not_found', wholesaler: wholesaler.id });

    const theirs = (
      await gw.inject(register({ name: 'Privat', endpoint: PUBLIC_ENDPOINT }, other.secret))
    ).json();
    expect(theirs.wholesaler.id).not.toBe(wholesaler.id);
  });

  it('refuses to re-register an endpoint under another MSV3 version (409), but returns it for the same or no version', async () => {
    const endpoint = 'https://93.184.216.34/msv3/v1.0/versioned';
    const first = await gw.inject(register({ name: 'Zweigstelle', endpoint, msv3_version: 1 }));
    expect(first.statusCode).toBe(200);
    const other = await gw.inject(register({ name: 'Zweigstelle', endpoint, msv3_version: 2 }));
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'conflict', param: 'msv3_version' });
    expect(other.json().message).toContain(
      `already registered as ${first.json().wholesaler.id} with MSV3 version 1`,
    );
    for (const again of [{ msv3_version: 1 }, {}]) {
      const response = await gw.inject(register({ name: 'Anderer Name', endpoint, ...again }));
      expect(response.statusCode).toBe(200);
      expect(response.json().wholesaler).toEqual(first.json().wholesaler);
    }
  });

  it('accepts MSV3 version 1 endpoints', async () => {
    const response = await gw.inject(
      register({ name: 'Altsystem', endpoint: 'https://93.184.216.34/msv3/v1.0', msv3_version: 1 }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json().wholesaler).toMatchObject({ msv3_version: 1, route: 'sandbox' });
  });

  it('validates the endpoint URL: shape, https for live keys, no private addresses by default', async () => {
    const cases: [string, 'test' | 'live', string][] = [
      ['not a url', 'test', 'invalid_request'],
      ['ftp://93.184.216.34/msv3', 'test', 'invalid_request'],
      ['https://user:secret@93.184.216.34/msv3', 'test', 'invalid_request'],
      ['https://93.184.216.34/msv3?tenant=1', 'test', 'invalid_request'],
      ['https://93.184.216.34/msv3#x', 'test', 'invalid_request'],
      ['http://93.184.216.34/msv3', 'live', 'endpoint_not_allowed'],
      ['https://127.0.0.1/msv3', 'test', 'endpoint_not_allowed'],
      ['https://localhost:8443/msv3', 'live', 'endpoint_not_allowed'],
      ['https://10.1.2.3/msv3', 'live', 'endpoint_not_allowed'],
      ['https://192.168.178.20/msv3', 'test', 'endpoint_not_allowed'],
      ['https://169.254.169.254/latest', 'test', 'endpoint_not_allowed'],
      ['https://[::1]/msv3', 'test', 'endpoint_not_allowed'],
      ['https://[fe80::1]/msv3', 'test', 'endpoint_not_allowed'],
      ['https://[::ffff:127.0.0.1]/msv3', 'live', 'endpoint_not_allowed'],
    ];
    for (const [endpoint, mode, error] of cases) {
      const response = await gw.inject(register({ name: 'X', endpoint }, mode));
      expect({ endpoint, status: response.statusCode, error: response.json().error }).toEqual({
        endpoint,
        status: 400,
        error,
      });
      expect(response.json()).toMatchObject({
        param: 'endpoint',
        message: expect.stringMatching(/^endpoint: /),
      });
    }
    const plainHttpInSandbox = await gw.inject(
      register({ name: 'X', endpoint: 'http://93.184.216.34/msv3' }),
    );
    expect(plainHttpInSandbox.statusCode).toBe(200);
  });

  it('validates the body, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ endpoint: PUBLIC_ENDPOINT }, 'name'],
      [{ name: '   ', endpoint: PUBLIC_ENDPOINT }, 'name'],
      [{ name: 'X' }, 'endpoint'],
      [{ name: 'X', endpoint: PUBLIC_ENDPOINT, msv3_version: 3 }, 'msv3_version'],
      [{ name: 'X', endpoint: PUBLIC_ENDPOINT, extra: true }, 'extra'],
    ];
    for (const [body, param] of cases) {
      const response = await gw.inject(register(body));
      expect({ param, status: response.statusCode }).toEqual({ param, status: 400 });
      expect(response.json()).toMatchObject({ error: 'invalid_request', param });
    }
  });

  it('replays a registration repeated with the same Idempotency-Key and refuses the key for another body', async () => {
    const headers = { 'idempotency-key': `register-${Math.random()}` };
    const body = { name: 'Hausapotheke Süd', endpoint: `${PUBLIC_ENDPOINT}/sued` };
    const first = await gw.inject({ ...register(body), headers });
    const again = await gw.inject({ ...register(body), headers });
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());

    const other = await gw.inject({ ...register({ ...body, name: 'Another name' }), headers });
    expect(other.statusCode).toBe(422);
    expect(other.json().error).toBe('idempotency_key_reused');
  });

  it('deletes a custom wholesaler of the account and mode with 204: gone from the list, no longer callable', async () => {
    const key = await gw.createKey('test');
    const { wholesaler } = (
      await gw.inject(register({ name: 'Zum Löschen', endpoint: `${PUBLIC_ENDPOINT}/delete` }, key.secret))
    ).json();
    const deleted = await gw.inject({
      method: 'DELETE',
      url: `/v1/wholesalers/custom/${wholesaler.id}`,
      key: key.secret,
      credentials: null,
    });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await idsFor(key.secret)).some((id) => id.startsWith('custom-'))).toBe(false);
    const call = await gw.inject({
      url: '/v1/connection/test',
      body: { wholesaler: wholesaler.id },
      key: key.secret,
    });
    expect(call.statusCode).toBe(404);
    expect(call.json()).toMatchObject({ error: 'wholesaler_not_found', wholesaler: wholesaler.id });

    const again = await gw.inject({
      method: 'DELETE',
      url: `/v1/wholesalers/custom/${wholesaler.id}`,
      key: key.secret,
      credentials: null,
    });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({
      error: 'wholesaler_not_found',
      error_code: '1200',
      wholesaler: wholesaler.id,
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it("answers 404 wholesaler_not_found for another account's or mode's custom wholesaler and leaves it alone", async () => {
    const owner = await gw.createKey('test');
    const stranger = await gw.createKey('test');
    const { wholesaler } = (
      await gw.inject(register({ name: 'Fremd', endpoint: `${PUBLIC_ENDPOINT}/fremd` }, owner.secret))
    ).json();
    const remove = (id: string, key: string) =>
      gw.inject({ method: 'DELETE', url: `/v1/wholesalers/custom/${id}`, key, credentials: null });

    for (const key of [stranger.secret, 'live']) {
      const response = await remove(wholesaler.id, key);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: 'wholesaler_not_found', wholesaler: wholesaler.id });
    }
    expect(await idsFor(owner.secret)).toContain(`${wholesaler.id}:sandbox`);
    // Catalogue wholesalers and the `_test` route of a custom one are no registrations.
    for (const id of ['phoenix', `${wholesaler.id}_test`]) {
      expect((await remove(id, owner.secret)).statusCode).toBe(404);
    }
    expect((await remove('not%20an%20id', owner.secret)).json()).toMatchObject({
      error: 'invalid_request',
      param: 'id',
    });
    expect((await remove(wholesaler.id, owner.secret)).statusCode).toBe(204);
  });

  it('keeps orders placed with a deleted custom wholesaler: replays still answer, the status says the wholesaler is gone', async () => {
    const key = await gw.createKey('test');
    const endpoint = `${PUBLIC_ENDPOINT}/orders`;
    const { wholesaler } = (await gw.inject(register({ name: 'Bestellt', endpoint }, key.secret))).json();
    // A test key reaches the sandbox for a custom id, so the order is really placed.
    const order = {
      method: 'POST' as const,
      url: '/v1/orders',
      key: key.secret,
      headers: { 'idempotency-key': `order-${Math.random()}` },
      body: { wholesaler: wholesaler.id, items: [{ pzn: '4114918', quantity: 1 }] },
    };
    const placed = await gw.inject(order);
    expect(placed.statusCode).toBe(200);
    const orderId = placed.json().order_id as string;
    const status = () =>
      gw.inject({
        url: `/v1/orders/${orderId}/status`,
        query: { wholesaler: wholesaler.id },
        key: key.secret,
      });
    expect((await status()).statusCode).toBe(200);

    const deleted = await gw.inject({
      method: 'DELETE',
      url: `/v1/wholesalers/custom/${wholesaler.id}`,
      key: key.secret,
      credentials: null,
    });
    expect(deleted.statusCode).toBe(204);

    const replay = await gw.inject(order);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(placed.json());
    const gone = await status();
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({
      error: 'wholesaler_not_found',
      wholesaler: wholesaler.id,
      message: expect.stringContaining(
        `Order ${orderId} was placed with ${wholesaler.id}, which is no longer registered`,
      ),
    });

    // The id is derived from the endpoint: registering it again brings the order's status back.
    const again = await gw.inject(register({ name: 'Bestellt', endpoint }, key.secret));
    expect(again.json().wholesaler.id).toBe(wholesaler.id);
    expect((await status()).statusCode).toBe(200);
  });

  it('needs an API key but no MSV3 credentials', async () => {
    const response = await gw.inject({ url: '/v1/wholesalers', key: null, credentials: null });
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toBe('api_key_missing');
  });
});

describeEachDialect('POST /v1/wholesalers/custom with ALLOW_PRIVATE_ENDPOINTS', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase(), env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
  });
  afterAll(() => gw.close());

  it('admits private and loopback hosts, plain http included, even for live keys', async () => {
    for (const endpoint of [
      'http://127.0.0.1:8089/msv3/v2.0',
      'http://localhost/msv3',
      'https://10.0.0.7/msv3',
    ]) {
      const response = await gw.inject(register({ name: 'On premise', endpoint }, 'live'));
      expect({ endpoint, status: response.statusCode }).toEqual({ endpoint, status: 200 });
    }
  });

  it('still refuses addresses nothing can be sent to', async () => {
    const response = await gw.inject(register({ name: 'X', endpoint: 'https://0.0.0.0/msv3' }, 'live'));
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe('endpoint_not_allowed');
  });
});

describeEachDialect('custom wholesalers: link-local and metadata endpoints', (getDatabase) => {
  let gw: Gateway;
  /** What `erp.example` resolves to, for registrations and connections alike; other names: loopback. */
  let erpAddress = '127.0.0.1';
  const lookup: HostLookup = async (host) => {
    const address = host === 'erp.example' ? erpAddress : '127.0.0.1';
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase(), env: { ALLOW_PRIVATE_ENDPOINTS: 'true' }, lookup });
  });
  afterAll(() => gw.close());

  it.each([
    ['https://169.254.169.254/latest', 'a cloud metadata address: 169.254.169.254'],
    ['https://[fe80::1]/msv3', 'a link-local address: fe80::1'],
    ['https://[::ffff:169.254.169.254]/msv3', 'a cloud metadata address: ::ffff:a9fe:a9fe'],
    ['https://[fd00:ec2::254]/msv3', 'a cloud metadata address: fd00:ec2::254'],
    ['http://metadata.google.internal/computeMetadata/v1', 'metadata.google.internal is the name of'],
  ])(
    'refuses %s with 400 endpoint_not_allowed although private endpoints are allowed',
    async (endpoint, says) => {
      const response = await gw.inject(register({ name: 'Metadata', endpoint }, 'live'));
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: 'endpoint_not_allowed', param: 'endpoint' });
      expect(response.json().message).toContain(says);
    },
  );

  it('refuses a name resolving to a link-local address without naming the address', async () => {
    erpAddress = 'fe80::1';
    const response = await gw.inject(register({ name: 'ERP', endpoint: 'http://erp.example/msv3' }, 'live'));
    erpAddress = '127.0.0.1';
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: 'endpoint_not_allowed',
      message:
        'endpoint: The host name erp.example does not resolve to an address this gateway calls: public addresses and the private ranges the operator allows.',
    });
  });

  it('refuses to connect when the name resolves to a link-local address later (DNS rebinding)', async () => {
    const endpoint = gw.mocks.live.baseUrl({ tenant: 'live/erp' }).replace('127.0.0.1', 'erp.example');
    const registered = await gw.inject(register({ name: 'ERP rebinding', endpoint }, 'live'));
    expect(registered.statusCode).toBe(200);
    const { id } = registered.json().wholesaler;
    const before = gw.mocks.live.requestCount('verbindungTesten');
    // A socket to fe80::1 without a zone could not leave this host even if the guard failed.
    erpAddress = 'fe80::1';
    const refused = await gw.inject({ url: '/v1/connection/test', body: { wholesaler: id }, key: 'live' });
    erpAddress = '127.0.0.1';
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'endpoint_not_allowed', wholesaler: id });
    expect(refused.json().message).not.toContain('fe80');
    expect(gw.mocks.live.requestCount('verbindungTesten')).toBe(before);
  });
});

describeEachDialect('custom wholesalers with ALLOWED_PRIVATE_CIDRS', (getDatabase) => {
  let gw: Gateway;
  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase(), env: { ALLOWED_PRIVATE_CIDRS: '127.0.0.0/30' } });
  });
  afterAll(() => gw.close());

  it('registers and calls an endpoint inside the listed range, and refuses one outside', async () => {
    const inside = gw.mocks.live.baseUrl({ tenant: 'live/inside' });
    const registered = await gw.inject(register({ name: 'Inside', endpoint: inside }, 'live'));
    expect(registered.statusCode).toBe(200);
    const connected = await gw.inject({
      url: '/v1/connection/test',
      body: { wholesaler: registered.json().wholesaler.id },
      key: 'live',
    });
    expect(connected.json()).toMatchObject({ connected: true, wholesaler: registered.json().wholesaler.id });

    const outside = await gw.inject(register({ name: 'Outside', endpoint: 'http://127.0.0.5/msv3' }, 'live'));
    expect(outside.statusCode).toBe(400);
    expect(outside.json()).toMatchObject({ error: 'endpoint_not_allowed', param: 'endpoint' });
  });
});
