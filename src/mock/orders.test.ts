import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import type { Msv3Version } from '../msv3/envelope.js';
import { AUFTRAGSARTEN, LIEFERVORGABEN, type Liefervorgabe } from '../msv3/model.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { createCalendar } from './calendar.js';
import { ANSWER_AVAILABLE_MS, ORDER_ID_RETENTION_MS } from './orders.js';
import { SCENARIO_PZNS, SUBSTITUTE_PZN, TRANSPORT_SCENARIOS } from './scenarios.js';
import { orderViolations } from './test-support/invariants.js';
import {
  CLIENT_ID,
  CUSTOMER,
  type Line,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';

const S = SCENARIO_PZNS;
const berlin = createCalendar('Europe/Berlin');

// Monday 5 January 2026, 10:00 in Berlin.
const clock = manualClock();
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock, nightOrderDelayMs: 60_000 });
});
afterAll(() => sandbox.close());

const order = (lines: Line[], options: { version?: Msv3Version; username?: string } = {}) =>
  sandbox.ok(bestellen, orderRequest(subOrder(lines)), options);
const firstPosition = async (line: Line, options: { version?: Msv3Version; username?: string } = {}) =>
  (await order([line], options)).subOrders[0]!.positions[0]!;
const typesOf = (position: { parts: { type: string; quantity: number | null }[] }) =>
  position.parts.map((p) => `${p.type} ${p.quantity}`);
const status = (orderId: string, username?: string) =>
  sandbox.ok(bestellstatusAbfragen, { clientSoftwareId: CLIENT_ID, orderId }, { username });

describe('order answers keep every rule of docs/msv3.md "Order answers"', () => {
  const TRANSPORT = new Set<string>(TRANSPORT_SCENARIOS.map((name) => S[name].pzn));
  const pzn = fc.oneof(
    fc.constantFrom(
      ...Object.values(S)
        .map((s) => s.pzn)
        .filter((p) => !TRANSPORT.has(p)),
      SUBSTITUTE_PZN,
    ),
    fc.integer({ min: 1, max: 99_999_999 }).map((n) => String(n).padStart(8, '0')),
  );
  const position = fc.record({
    pzn,
    quantity: fc.integer({ min: 1, max: 9_999 }),
    deliveryInstruction: fc.constantFrom<Liefervorgabe>(...LIEFERVORGABEN),
  });
  const sub = fc.record({
    orderType: fc.constantFrom(...AUFTRAGSARTEN),
    positions: fc.uniqueArray(position, { minLength: 1, maxLength: 12, selector: (p) => p.pzn }),
  });

  it('for generated orders over HTTP, v1 and v2, with every Liefervorgabe and order type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Msv3Version>(1, 2),
        fc.constantFrom('apo7', 'apo7versand', 'apo7normalonly', 'apo7nosubst'),
        fc.array(sub, { minLength: 1, maxLength: 4 }),
        async (version, username, subs) => {
          const request = orderRequest(
            ...subs.map((s) =>
              subOrder([], {
                orderType: s.orderType,
                positions: s.positions,
                ...(s.orderType === 'VERSAND' ? { containerId: 'GEB1' } : {}),
              }),
            ),
          );
          const response = await sandbox.ok(bestellen, request, { version, username, tenant: 'property' });
          expect(orderViolations(request, response, version)).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('bestellen', () => {
  it('confirms an article in stock for the next tour with a TourId', async () => {
    const response = await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 3, 'Normal']])));
    expect(response.nightMode).toBe(false);
    expect(response.subOrders[0]?.positions[0]?.parts).toEqual([
      {
        quantity: 3,
        type: 'Normal',
        deliveryTime: '2026-01-05T14:00:00+01:00',
        tour: 'Mittagstour',
        defectReason: 'KeineAngabe',
        tourId: 'T2',
        tourDeviation: false,
      },
    ]);
  });

  it('respects Liefervorgabe Normal: what only other sources could supply becomes KeineLieferungAber…Moeglich', async () => {
    expect(typesOf(await firstPosition(['04114918', 9_999, 'Normal']))).toEqual([
      expect.stringMatching(/^Normal \d+$/),
      expect.stringMatching(/^KeineLieferungAberVerbundMoeglich \d+$/),
      expect.stringMatching(/^KeineLieferungAberNachlieferungMoeglich \d+$/),
    ]);
    expect(typesOf(await firstPosition([S.NETWORK.pzn, 7, 'Normal']))).toEqual([
      'KeineLieferungAberVerbundMoeglich 7',
    ]);
    expect(typesOf(await firstPosition([S.BACK_ORDER.pzn, 4, 'MaxVerbund']))).toEqual([
      'KeineLieferungAberNachlieferungMoeglich 4',
    ]);
    const dispo = await firstPosition([S.DISPO.pzn, 2, 'MaxNachlieferung']);
    expect(dispo.parts).toEqual([
      {
        quantity: 2,
        type: 'KeineLieferungAberDispoMoeglich',
        deliveryTime: null,
        defectReason: 'NichtGefuehrt',
        tourDeviation: false,
      },
    ]);
  });

  it('goes as far as the Liefervorgabe allows', async () => {
    expect(typesOf(await firstPosition([S.NETWORK.pzn, 7, 'MaxVerbund']))).toEqual(['Verbund 7']);
    expect(typesOf(await firstPosition([S.BACK_ORDER.pzn, 4, 'MaxNachlieferung']))).toEqual([
      'Nachlieferung 4',
    ]);
    expect(typesOf(await firstPosition([S.DISPO.pzn, 2, 'MaxDispo']))).toEqual(['Dispo 2']);
    const verbund = await firstPosition([S.NETWORK.pzn, 7, 'MaxDispo']);
    expect(verbund.parts[0]).toMatchObject({ tourId: 'T3', tour: 'Abendtour' });
  });

  it('PARTIAL: 2 units with the tour, the rest NichtLieferbar (FehltZurzeit, never Teildefekt in orders)', async () => {
    const p = await firstPosition([S.PARTIAL.pzn, 5, 'MaxDispo']);
    expect(p.parts.map((x) => [x.type, x.quantity, x.defectReason])).toEqual([
      ['Normal', 2, 'KeineAngabe'],
      ['NichtLieferbar', 3, 'FehltZurzeit'],
    ]);
  });

  it('NOT_DELIVERABLE in v1 and v2', async () => {
    expect((await firstPosition([S.NOT_DELIVERABLE.pzn, 1])).parts[0]?.defectReason).toBe(
      'HerstellerNichtLieferbar',
    );
    const v1 = await firstPosition([S.NOT_DELIVERABLE.pzn, 1], { version: 1 });
    expect(v1.parts[0]).toMatchObject({ type: 'NichtLieferbar', defectReason: 'NichtLieferbar' });
    expect(v1.parts[0]?.tourDeviation).toBeUndefined();
  });

  it('SUBSTITUTION: the position keeps the ordered PZN and names the delivered one', async () => {
    const p = await firstPosition([S.SUBSTITUTION.pzn, 2, 'Normal']);
    expect(p.pzn).toBe(S.SUBSTITUTION.pzn);
    expect(p.substitution).toEqual({
      reason: 'Nachfolgeprodukt',
      defectReason: 'AusserHandel',
      deliveredPzn: SUBSTITUTE_PZN,
    });
    expect(p.parts).toMatchObject([{ type: 'Normal', quantity: 2, tourId: 'T2' }]);
  });

  it('TOUR_DEVIATION: Normal with the later tour and Tourabweichung=true', async () => {
    const p = await firstPosition([S.TOUR_DEVIATION.pzn, 1, 'Normal']);
    expect(p.parts).toMatchObject([{ type: 'Normal', tourId: 'T3', tourDeviation: true }]);
  });

  it('ORDER_REJECTED: that sub-order gets an Auftragsfehler, the others go through', async () => {
    const request = orderRequest(
      subOrder([['04114918', 1]]),
      subOrder([
        [S.ORDER_REJECTED.pzn, 1],
        ['04114918', 1],
      ]),
    );
    const response = await sandbox.ok(bestellen, request);
    const [good, bad] = request.subOrders.map((s) => response.subOrders.find((a) => a.id === s.id)!);
    expect(good?.error).toBeUndefined();
    expect(good?.positions).toHaveLength(1);
    expect(bad?.positions).toEqual([]);
    expect(bad?.error).toMatchObject({ errorCode: 'A20' });
  });

  it('rejects sub-orders of an order type that is not agreed (SONDER for normalonly, VERSAND by default)', async () => {
    const request = orderRequest(
      subOrder([['04114918', 1]], { orderType: 'SONDER' }),
      subOrder([['04114918', 1]], { orderType: 'VERSAND', containerId: 'KISTE7' }),
      subOrder([['04114918', 1]], { orderType: 'STAPEL' }),
    );
    const response = await sandbox.ok(bestellen, request, { username: 'apo1normalonly' });
    expect(response.subOrders.map((s) => s.error?.userText ?? 'ok')).toEqual([
      'Auftragsart SONDER ist nicht vereinbart.',
      'Auftragsart VERSAND ist nicht vereinbart.',
      'Auftragsart STAPEL ist nicht vereinbart.',
    ]);
    const versand = await sandbox.ok(bestellen, orderRequest(request.subOrders[1]!), {
      username: 'apo1versand',
    });
    expect(versand.subOrders[0]).toMatchObject({
      orderType: 'VERSAND',
      containerId: 'KISTE7',
      error: undefined,
    });
  });

  it.each([
    [
      'VERSAND without GebindeId',
      [subOrder([['04114918', 1]], { orderType: 'VERSAND' })],
      'GebindeId is mandatory',
    ],
    [
      'a GebindeId on a NORMAL sub-order',
      [subOrder([['04114918', 1]], { containerId: 'KISTE7' })],
      'only allowed for VERSAND',
    ],
    [
      'a PZN twice in one sub-order',
      [
        subOrder([
          ['04114918', 1],
          ['04114918', 2],
        ]),
      ],
      'occurs more than once',
    ],
  ])('answers %s with a ValidationFault and places nothing', async (_case, subs, text) => {
    const before = sandbox.mock.placedOrderCount();
    const error = await sandbox.fails(bestellen, orderRequest(...subs));
    expect(error).toMatchObject({
      reason: 'soap_fault',
      maybeDelivered: false,
      fault: { kind: 'ValidationFault' },
    });
    expect(error.reason === 'soap_fault' && error.fault.technicalText).toContain(text);
    expect(sandbox.mock.placedOrderCount()).toBe(before);
  });

  it('answers two sub-orders with the same Id with a ValidationFault', async () => {
    const sub = subOrder([['04114918', 1]]);
    const error = await sandbox.fails(
      bestellen,
      orderRequest(sub, { ...sub, positions: [{ ...sub.positions[0]!, pzn: '01234567' }] }),
    );
    expect(error).toMatchObject({ fault: { kind: 'ValidationFault' } });
  });

  it('allows the same PZN in different sub-orders', async () => {
    const response = await sandbox.ok(
      bestellen,
      orderRequest(subOrder([['04114918', 1]]), subOrder([['04114918', 2]])),
    );
    expect(response.subOrders).toHaveLength(2);
  });
});

describe('orders are deduplicated by Bestellung Id', () => {
  it('a repeated bestellen with the same Id returns the first answer and places nothing new', async () => {
    const own = await startSandbox({ clock });
    try {
      const request = orderRequest(subOrder([['04114918', 2]]));
      const first = await own.ok(bestellen, request);
      const noticesAfterFirst = own.mock.deliveryNotices('test', CUSTOMER).length;
      const second = await own.ok(bestellen, request);
      const changed = await own.ok(bestellen, { ...request, subOrders: [subOrder([['01234567', 9]])] });
      expect(second).toEqual(first);
      expect(changed).toEqual(first);
      expect(own.mock.placedOrderCount()).toBe(1);
      expect(own.mock.orders('test', CUSTOMER)).toHaveLength(1);
      expect(own.mock.deliveryNotices('test', CUSTOMER)).toHaveLength(noticesAfterFirst);
      expect(own.mock.requestCount('bestellen')).toBe(3);
    } finally {
      await own.close();
    }
  });
});

describe('bestellstatusAbfragen', () => {
  it('returns the full answer of a placed order', async () => {
    const request = orderRequest(subOrder([['04114918', 2]]));
    const placed = await sandbox.ok(bestellen, request);
    expect(await status(request.id)).toEqual({
      id: request.id,
      status: 'BestellantwortVerfuegbar',
      supportId: 4711,
      subOrders: placed.subOrders,
    });
  });

  it('says KennungUnbekannt for an id never seen (and for another customer’s order)', async () => {
    expect(await status(uuid())).toMatchObject({
      status: 'KennungUnbekannt',
      supportId: null,
      subOrders: [],
    });
    const request = orderRequest(subOrder([['04114918', 2]]));
    await sandbox.ok(bestellen, request);
    expect((await status(request.id, 'someoneElse')).status).toBe('KennungUnbekannt');
  });

  it('works in v1 as well', async () => {
    const request = orderRequest(subOrder([['04114918', 2]]));
    await sandbox.ok(bestellen, request, { version: 1 });
    const answer = await sandbox.ok(
      bestellstatusAbfragen,
      { clientSoftwareId: CLIENT_ID, orderId: request.id },
      { version: 1 },
    );
    expect(answer.status).toBe('BestellantwortVerfuegbar');
  });

  it('says BestellantwortNichtVerfuegbar after 7 days and KennungUnbekannt after 30 (manual clock)', async () => {
    const ownClock = manualClock();
    const timed = await startSandbox({ clock: ownClock });
    try {
      const request = orderRequest(subOrder([['04114918', 1]]));
      await timed.ok(bestellen, request);
      const ask = () => timed.ok(bestellstatusAbfragen, { clientSoftwareId: CLIENT_ID, orderId: request.id });
      ownClock.advance(ANSWER_AVAILABLE_MS);
      expect((await ask()).status).toBe('BestellantwortVerfuegbar');
      ownClock.advance(1);
      expect(await ask()).toMatchObject({
        status: 'BestellantwortNichtVerfuegbar',
        supportId: 4711,
        subOrders: [],
      });
      ownClock.advance(ORDER_ID_RETENTION_MS - ANSWER_AVAILABLE_MS);
      expect(await ask()).toMatchObject({ status: 'KennungUnbekannt', supportId: null });
    } finally {
      await timed.close();
    }
  });
});

describe('night mode', () => {
  it('NIGHT_MODE scenario: NachtBetrieb=true without sub-orders; the result comes later through the status', async () => {
    const nightClock = manualClock();
    const night = await startSandbox({ clock: nightClock, nightOrderDelayMs: 60_000 });
    try {
      const request = orderRequest(
        subOrder([
          [S.NIGHT_MODE.pzn, 2],
          ['04114918', 1],
        ]),
      );
      const answer = await night.ok(bestellen, request);
      expect(answer).toEqual({ id: request.id, supportId: 4711, nightMode: true, subOrders: [] });
      const ask = () => night.ok(bestellstatusAbfragen, { clientSoftwareId: CLIENT_ID, orderId: request.id });
      expect(await ask()).toMatchObject({ status: 'BestellantwortNichtVerfuegbar', supportId: 4711 });
      expect((await night.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID })).notices).toEqual([]);
      expect(night.mock.orders('test', CUSTOMER)).toMatchObject([{ id: request.id, nightMode: true }]);

      nightClock.advance(60_000);
      const later = await ask();
      expect(later.status).toBe('BestellantwortVerfuegbar');
      expect(later.subOrders[0]?.positions.map((p) => p.pzn)).toEqual([S.NIGHT_MODE.pzn, '04114918']);
      expect((await night.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID })).notices).toHaveLength(1);
      // A retry of the night order still gets the first (night) answer.
      expect(await night.ok(bestellen, request)).toEqual(answer);
      expect(night.mock.placedOrderCount()).toBe(1);
    } finally {
      await night.close();
    }
  });

  it('configured night hours: an order at 23:00 is processed at 06:00 for the morning tour', async () => {
    const nightClock = manualClock(berlin.epochOf('2026-01-05', '23:00'));
    const night = await startSandbox({ clock: nightClock, nightHours: { from: 22, to: 6 } });
    try {
      const request = orderRequest(subOrder([['04114918', 1]]));
      expect((await night.ok(bestellen, request)).nightMode).toBe(true);
      const ask = () => night.ok(bestellstatusAbfragen, { clientSoftwareId: CLIENT_ID, orderId: request.id });
      nightClock.set(berlin.epochOf('2026-01-06', '05:59'));
      expect((await ask()).status).toBe('BestellantwortNichtVerfuegbar');
      nightClock.set(berlin.epochOf('2026-01-06', '06:00'));
      const done = await ask();
      expect(done.status).toBe('BestellantwortVerfuegbar');
      expect(done.subOrders[0]?.positions[0]?.parts[0]).toMatchObject({
        tourId: 'T1',
        deliveryTime: '2026-01-06T10:30:00+01:00',
      });
      nightClock.set(berlin.epochOf('2026-01-06', '12:00'));
      expect((await night.ok(bestellen, orderRequest(subOrder([['04114918', 1]])))).nightMode).toBe(false);
    } finally {
      await night.close();
    }
  });
});
