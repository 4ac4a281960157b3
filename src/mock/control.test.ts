import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import { dokumentAbfragen } from '../msv3/operations/dokument-abfragen.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { verfuegbarkeitAnfragen } from '../msv3/operations/verfuegbarkeit-anfragen.js';
import { type ControlRequest, controlUrlOf, sendControl } from './control-client.js';
import { SCENARIO_PZNS } from './scenarios.js';
import { decodeTenant, encodeHead } from './state-codec.js';
import {
  availabilityRequest,
  CLIENT_ID,
  CUSTOMER,
  envelope,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
} from './test-support/sandbox.js';
import { tenantStoreInMemory, wholeStateDocument } from './test-support/tenant-store.js';
import { memoryWorld, persistentWorld } from './world-store.js';

const NIGHT = SCENARIO_PZNS.NIGHT_MODE.pzn;

const clock = manualClock();
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock, nightOrderDelayMs: 3_600_000 });
});
afterAll(() => sandbox.close());

const control = (input: ControlRequest, tenant = 'test', customer = CUSTOMER) =>
  sendControl(sandbox.mock.baseUrl({ tenant }), customer, input);
const newNotices = (tenant = 'test') =>
  sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { tenant });

describe('the control surface', () => {
  it('is reached at /<tenant>/control/<action>, derived from the SOAP base URL', () => {
    expect(controlUrlOf('http://127.0.0.1:1/sandbox/abc/phoenix/msv3/v2.0', 'status')).toBe(
      'http://127.0.0.1:1/sandbox/abc/phoenix/control/status',
    );
  });

  it('processes a night-mode order now: its answer and its delivery notices appear at once', async () => {
    const request = orderRequest(
      subOrder([
        [NIGHT, 2],
        ['04114918', 3],
      ]),
    );
    const placed = await sandbox.ok(bestellen, request);
    expect(placed.nightMode).toBe(true);
    const before = await sandbox.ok(bestellstatusAbfragen, {
      clientSoftwareId: CLIENT_ID,
      orderId: request.id,
    });
    expect(before.status).toBe('BestellantwortNichtVerfuegbar');

    const processed = await control({ action: 'process-order', orderId: request.id });
    expect(processed).toMatchObject({ ok: true });
    if (!processed.ok) throw new Error('not processed');
    expect(processed.notices.length).toBeGreaterThan(0);

    const after = await sandbox.ok(bestellstatusAbfragen, {
      clientSoftwareId: CLIENT_ID,
      orderId: request.id,
    });
    expect(after.status).toBe('BestellantwortVerfuegbar');
    const listed = (await newNotices()).notices.map((n) => n.deliveryNoteNumber);
    for (const notice of processed.notices) expect(listed).toContain(notice.deliveryNoteNumber);
    const shown = await control({ action: 'order-notices', orderId: request.id });
    expect(shown.ok && shown.notices.map((n) => n.deliveryNoteNumber)).toEqual(
      processed.notices.map((n) => n.deliveryNoteNumber),
    );

    // Processed once: a second time is refused, and the order stays as it was.
    expect(await control({ action: 'process-order', orderId: request.id })).toMatchObject({
      ok: false,
      status: 409,
      error: 'order_processed',
    });
  });

  it('delivers a processed order again, with half of every line missing when asked for shortages', async () => {
    const request = orderRequest(subOrder([['04114918', 4]]));
    await sandbox.ok(bestellen, request);
    const first = await control({ action: 'order-notices', orderId: request.id });
    const counted = first.ok ? first.notices.length : -1;
    expect(counted).toBe(1);

    const short = await control({ action: 'deliver-order', orderId: request.id, shortages: true });
    if (!short.ok) throw new Error(short.message);
    const [notice] = short.notices;
    expect(notice!.hasShortages).toBe(true);
    expect(notice!.lines[0]!.shortages[0]!.quantity).toBe(2);
    expect(notice!.lines[0]!.delivered[0]!.quantity).toBe(2);
    // Numbered from the tenant's counter, after the order's own notice, with a document of its own.
    const numbers = [first.ok ? first.notices[0]!.deliveryNoteNumber : '', notice!.deliveryNoteNumber];
    expect(Number(numbers[1]!.slice(-6))).toBeGreaterThan(Number(numbers[0]!.slice(-6)));
    const pdf = await sandbox.ok(dokumentAbfragen, {
      clientSoftwareId: CLIENT_ID,
      documentId: notice!.documentId!,
    });
    expect(pdf.document?.data.subarray(0, 5).toString()).toBe('%PDF-');

    const full = await control({ action: 'deliver-order', orderId: request.id, shortages: false });
    if (!full.ok) throw new Error(full.message);
    expect(full.notices[0]!.hasShortages).toBe(false);
    const listed = (await newNotices()).notices.map((n) => n.deliveryNoteNumber);
    expect(listed).toEqual(
      expect.arrayContaining([notice!.deliveryNoteNumber, full.notices[0]!.deliveryNoteNumber]),
    );
    // The order's notices are all three, in the order they were made.
    const all = await control({ action: 'order-notices', orderId: request.id });
    expect(all.ok && all.notices.map((n) => n.deliveryNoteNumber)).toEqual([
      ...numbers,
      full.notices[0]!.deliveryNoteNumber,
    ]);
  });

  it("finds the notices of an order stored before orders kept their notices' numbers", async () => {
    const world = memoryWorld();
    const own = await startSandbox({ clock, world });
    try {
      const request = orderRequest(subOrder([['04114918', 4]]), subOrder([['01234567', 1]]));
      await own.ok(bestellen, request);
      const ask = () =>
        sendControl(own.mock.baseUrl({ tenant: 'test' }), CUSTOMER, {
          action: 'order-notices',
          orderId: request.id,
        });
      const kept = await ask();
      expect(kept.ok && kept.notices.length).toBeGreaterThan(0);
      const stored = world.findTenant('test')!.customers.get(CUSTOMER)!.orders.get(request.id)!;
      delete stored.noticeNumbers;
      expect(await ask()).toEqual(kept);
    } finally {
      await own.close();
    }
  });

  it('refuses to deliver an order that is not processed, and orders of another customer or tenant are unknown', async () => {
    const request = orderRequest(subOrder([[NIGHT, 1]]));
    await sandbox.ok(bestellen, request);
    expect(await control({ action: 'deliver-order', orderId: request.id, shortages: false })).toMatchObject({
      ok: false,
      status: 409,
      error: 'order_not_processed',
    });
    expect(await control({ action: 'process-order', orderId: request.id }, 'other')).toMatchObject({
      ok: false,
      status: 404,
      error: 'order_not_found',
    });
    expect(
      await control({ action: 'process-order', orderId: request.id }, 'test', 'PLA\\apotheke2'),
    ).toMatchObject({ ok: false, status: 404 });
  });

  it('takes a tenant down: every SOAP request answers 503, credentials or not, until it is brought up', async () => {
    expect(await control({ action: 'status', up: false }, 'maint')).toMatchObject({
      ok: true,
      changed: true,
    });
    expect(await control({ action: 'status', up: false }, 'maint')).toMatchObject({
      ok: true,
      changed: false,
    });
    const down = await sandbox.fails(verfuegbarkeitAnfragen, availabilityRequest([['04114918', 1]]), {
      tenant: 'maint',
    });
    expect(down).toMatchObject({ reason: 'http_status', status: 503 });
    const anonymous = await sandbox.raw(envelope('<m:verbindungTesten/>'), {
      path: '/maint/msv3/v2.0/VerbindungTesten',
      authorization: null,
    });
    expect(anonymous.status).toBe(503);
    expect(anonymous.headers['retry-after']).toBe('60');
    // Other tenants are not affected.
    await sandbox.ok(verfuegbarkeitAnfragen, availabilityRequest([['04114918', 1]]), { tenant: 'test' });

    expect(await control({ action: 'status', up: true }, 'maint')).toMatchObject({ ok: true, changed: true });
    await sandbox.ok(verfuegbarkeitAnfragen, availabilityRequest([['04114918', 1]]), { tenant: 'maint' });
  });

  it('answers bad requests plainly: unknown action, missing fields, no JSON, no login', async () => {
    const url = (action: string) => controlUrlOf(sandbox.mock.baseUrl({ tenant: 'test' }), action);
    const post = (action: string, body: string, headers: Record<string, string> = {}) =>
      fetch(url(action), {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${CUSTOMER}:pw`).toString('base64')}`,
          'content-type': 'application/json',
          ...headers,
        },
        body,
      });
    expect((await post('explode', '{}')).status).toBe(404);
    expect(await (await post('status', '{"up":"yes"}')).json()).toMatchObject({ error: 'invalid_request' });
    expect((await post('process-order', '{}')).status).toBe(400);
    expect((await post('status', 'not json')).status).toBe(400);
    expect((await post('status', '{"up":true}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post('status', '{"up":true}', { authorization: '' })).status).toBe(401);
  });
});

describe('control actions on a persistent world', () => {
  it('keeps the down state with the tenant: another instance on the same store sees it', async () => {
    const store = tenantStoreInMemory();
    const first = await startSandbox({ world: persistentWorld(store) });
    const second = await startSandbox({ world: persistentWorld(store) });
    try {
      const down = await sendControl(first.mock.baseUrl({ tenant: 'shared' }), CUSTOMER, {
        action: 'status',
        up: false,
      });
      expect(down).toMatchObject({ ok: true, changed: true });
      const failed = await second.fails(verfuegbarkeitAnfragen, availabilityRequest([['04114918', 1]]), {
        tenant: 'shared',
      });
      expect(failed).toMatchObject({ reason: 'http_status', status: 503 });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('encodes the down state, and reads documents written before it as up', () => {
    const world = memoryWorld();
    return world
      .update('t', 'write', async (state) => {
        state.down = true;
        return { changed: true };
      })
      .then(() => {
        const tenant = world.findTenant('t')!;
        expect(decodeTenant('t', encodeHead(tenant), []).tenant.down).toBe(true);
        expect('down' in JSON.parse(encodeHead({ ...tenant, down: false }))).toBe(false);
        const old = JSON.parse(wholeStateDocument({ ...tenant, down: false })) as Record<string, unknown>;
        expect('down' in old).toBe(false);
        expect(decodeTenant('t', JSON.stringify(old), []).tenant.down).toBe(false);
      });
  });
});
