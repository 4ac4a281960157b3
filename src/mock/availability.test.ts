import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import type { Msv3Version } from '../msv3/envelope.js';
import { maxQuantity } from '../msv3/model.js';
import { verfuegbarkeitAnfragen } from '../msv3/operations/verfuegbarkeit-anfragen.js';
import { verfuegbarkeitAnfragenBulk } from '../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { assessArticle } from './availability.js';
import { createCalendar } from './calendar.js';
import { hasValidCheckDigit } from './catalogue.js';
import { contractFor } from './contract.js';
import { SCENARIO_PZNS, SUBSTITUTE_PZN, TRANSPORT_SCENARIOS } from './scenarios.js';
import { scheduleAt } from './supply.js';
import { availabilityViolations } from './test-support/invariants.js';
import { availabilityRequest, CLIENT_ID, type Sandbox, startSandbox, uuid } from './test-support/sandbox.js';

// Monday 5 January 2026, 10:00 in Berlin: the next tour is the Mittagstour (cut-off 11:30, arrival 14:00).
const clock = manualClock();
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock });
});
afterAll(() => sandbox.close());

const S = SCENARIO_PZNS;
const ask = (pzn: string, quantity: number, options: { version?: Msv3Version; username?: string } = {}) =>
  sandbox
    .ok(verfuegbarkeitAnfragen, availabilityRequest([[pzn, quantity]]), options)
    .then((r) => r.articles[0]!);

// Transport scenarios (faults, delays, dropped connections) have their own tests.
const TRANSPORT = new Set<string>(TRANSPORT_SCENARIOS.map((name) => S[name].pzn));
const anyPzn = fc.oneof(
  fc.constantFrom(
    ...Object.values(S)
      .map((s) => s.pzn)
      .filter((pzn) => !TRANSPORT.has(pzn)),
    SUBSTITUTE_PZN,
  ),
  fc.integer({ min: 1, max: 99_999_999 }).map((n) => String(n).padStart(8, '0')),
  fc.bigInt({ min: 1_000_000_000_000n, max: 9_999_999_999_999n }).map(String),
);

describe('availability answers keep every rule of docs/msv3.md "Availability answers"', () => {
  it('for generated requests over HTTP, v1 and v2, specific and unspecific contracts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Msv3Version>(1, 2),
        fc.constantFrom('apo1', 'apo1unspecific', 'apo1nosubst', 'NL01\\apo2'),
        fc.uniqueArray(anyPzn, { minLength: 1, maxLength: 50 }),
        fc.infiniteStream(fc.integer({ min: 1, max: 99_999 })),
        async (version, username, pzns, quantities) => {
          const iterator = quantities[Symbol.iterator]();
          const articles = pzns.map((pzn): [string, number] => {
            const q = iterator.next().value as number;
            return [pzn, (q % maxQuantity(version)) + 1];
          });
          const request = availabilityRequest(articles);
          const response = await sandbox.ok(verfuegbarkeitAnfragen, request, { version, username });
          expect(availabilityViolations(request, response, version)).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('for many more generated articles checked directly on the simulation', () => {
    const calendar = createCalendar('Europe/Berlin');
    fc.assert(
      fc.property(
        fc.constantFrom<Msv3Version>(1, 2),
        fc.constantFrom('apo', 'apounspecific', 'aponosubst'),
        anyPzn,
        fc.integer({ min: 1, max: 99_999 }),
        fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 11, 31) }),
        (version, customer, pzn, rawQuantity, now) => {
          const quantity = (rawQuantity % maxQuantity(version)) + 1;
          const contract = contractFor(customer);
          const article = assessArticle(pzn, quantity, {
            version,
            contract,
            schedule: scheduleAt(now, calendar),
            calendar,
            wholesaler: '',
          });
          const request = { clientSoftwareId: 'x', id: 'i', articles: [{ pzn, quantity }] };
          const response = {
            id: 'i',
            responseType: contract.specificAvailability ? ('Spezifisch' as const) : ('Unspezifisch' as const),
            articles: [article],
          };
          expect(availabilityViolations(request, response, version)).toEqual([]);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('availability of ordinary and scenario articles', () => {
  it('an ordinary article in stock comes with the next tour', async () => {
    const a = await ask('04114918', 3);
    expect(a.parts).toEqual([
      {
        quantity: 3,
        type: 'Normal',
        deliveryTime: '2026-01-05T14:00:00+01:00',
        tour: 'Mittagstour',
        defectReason: 'KeineAngabe',
        tourDeviation: false,
      },
    ]);
  });

  it('gives the same answer for the same PZN every time (stock derives from the PZN)', async () => {
    expect(await ask('01234567', 600)).toEqual(await ask('01234567', 600));
  });

  it('splits a quantity above stock into Normal, Verbund and Nachlieferung', async () => {
    const a = await ask('04114918', 99_999);
    expect(a.parts.map((p) => p.type)).toEqual(['Normal', 'Verbund', 'Nachlieferung']);
    expect(a.parts[1]).toMatchObject({ tour: 'Abendtour', deliveryTime: '2026-01-05T18:30:00+01:00' });
    expect(a.parts[2]).toMatchObject({ deliveryTime: null, defectReason: 'FehltZurzeit' });
  });

  it('NOT_DELIVERABLE: NichtLieferbar with HerstellerNichtLieferbar (v2) / NichtLieferbar (v1)', async () => {
    expect((await ask(S.NOT_DELIVERABLE.pzn, 2)).parts).toEqual([
      {
        quantity: 2,
        type: 'NichtLieferbar',
        deliveryTime: null,
        defectReason: 'HerstellerNichtLieferbar',
        tourDeviation: false,
      },
    ]);
    expect((await ask(S.NOT_DELIVERABLE.pzn, 2, { version: 1 })).parts).toEqual([
      { quantity: 2, type: 'NichtLieferbar', deliveryTime: null, defectReason: 'NichtLieferbar' },
    ]);
  });

  it('PARTIAL: 2 units Normal, the rest NichtLieferbar with Teildefekt', async () => {
    const a = await ask(S.PARTIAL.pzn, 5);
    expect(a.parts.map((p) => [p.type, p.quantity, p.defectReason])).toEqual([
      ['Normal', 2, 'KeineAngabe'],
      ['NichtLieferbar', 3, 'Teildefekt'],
    ]);
  });

  it('BACK_ORDER: one Nachlieferung part without a time', async () => {
    expect((await ask(S.BACK_ORDER.pzn, 4)).parts).toEqual([
      {
        quantity: 4,
        type: 'Nachlieferung',
        deliveryTime: null,
        defectReason: 'FehltZurzeit',
        tourDeviation: false,
      },
    ]);
  });

  it('SUBSTITUTION: the successor is delivered, and the substitution covers all parts', async () => {
    const a = await ask(S.SUBSTITUTION.pzn, 2);
    expect(a.substitution).toEqual({
      reason: 'Nachfolgeprodukt',
      defectReason: 'AusserHandel',
      deliveredPzn: SUBSTITUTE_PZN,
    });
    expect(a.parts.map((p) => p.type)).toEqual(['Normal']);
  });

  it('SUBSTITUTION without a substitution agreement: only a proposal, the article stays missing', async () => {
    const a = await ask(S.SUBSTITUTION.pzn, 2, { username: 'apo1nosubst' });
    expect(a.substitution?.reason).toBe('Vorschlag');
    expect(a.parts).toEqual([
      {
        quantity: 2,
        type: 'NichtLieferbar',
        deliveryTime: null,
        defectReason: 'AusserHandel',
        tourDeviation: false,
      },
    ]);
  });

  it('TOUR_DEVIATION: Normal, but with the tour after the next and Tourabweichung=true (v1: just the later tour)', async () => {
    const a = await ask(S.TOUR_DEVIATION.pzn, 1);
    expect(a.parts).toEqual([
      {
        quantity: 1,
        type: 'Normal',
        deliveryTime: '2026-01-05T18:30:00+01:00',
        tour: 'Abendtour',
        defectReason: 'KeineAngabe',
        tourDeviation: true,
      },
    ]);
    expect((await ask(S.TOUR_DEVIATION.pzn, 1, { version: 1 })).parts[0]?.tourDeviation).toBeUndefined();
  });

  it('NETWORK: one Verbund part with a later tour', async () => {
    expect((await ask(S.NETWORK.pzn, 7)).parts).toEqual([
      {
        quantity: 7,
        type: 'Verbund',
        deliveryTime: '2026-01-05T18:30:00+01:00',
        tour: 'Abendtour',
        defectReason: 'KeineAngabe',
        tourDeviation: false,
      },
    ]);
  });

  it('DISPO: one Dispo part, Grund NichtGefuehrt, in about two days', async () => {
    expect((await ask(S.DISPO.pzn, 1)).parts).toEqual([
      {
        quantity: 1,
        type: 'Dispo',
        deliveryTime: '2026-01-07T14:00:00+01:00',
        defectReason: 'NichtGefuehrt',
        tourDeviation: false,
      },
    ]);
  });

  it('an EAN-length number is an unknown article', async () => {
    expect((await ask('4006381333931', 1)).parts).toEqual([
      {
        quantity: 1,
        type: 'NichtLieferbar',
        deliveryTime: null,
        defectReason: 'ArtikelNrUnbekannt',
        tourDeviation: false,
      },
    ]);
  });

  it('a customer without specific answers gets RTyp=Unspezifisch without times and tours', async () => {
    const response = await sandbox.ok(
      verfuegbarkeitAnfragen,
      availabilityRequest([
        ['04114918', 1],
        [S.NETWORK.pzn, 1],
      ]),
      { username: 'apo1unspecific' },
    );
    expect(response.responseType).toBe('Unspezifisch');
    for (const a of response.articles) {
      for (const p of a.parts) {
        expect(p.deliveryTime).toBeNull();
        expect(p.tour).toBeUndefined();
      }
    }
  });

  it('rejects a PZN asked twice in one request with a ValidationFault', async () => {
    const error = await sandbox.fails(
      verfuegbarkeitAnfragen,
      availabilityRequest([
        ['04114918', 1],
        ['04114918', 2],
      ]),
    );
    expect(error).toMatchObject({
      reason: 'soap_fault',
      status: 500,
      fault: { kind: 'ValidationFault', errorCode: 'V001' },
    });
    expect(error.reason === 'soap_fault' && error.fault.technicalText).toContain(
      '04114918 occurs more than once',
    );
  });
});

describe('bulk availability', () => {
  const bulk = (pzns: string[], username?: string) =>
    sandbox.call(
      verfuegbarkeitAnfragenBulk,
      { clientSoftwareId: CLIENT_ID, id: uuid(), query: { kind: 'list', pzns } },
      { username },
    );

  it('lists only the PZNs with units for the next tour', async () => {
    const result = await bulk([
      '04114918',
      S.NOT_DELIVERABLE.pzn,
      S.PARTIAL.pzn,
      S.BACK_ORDER.pzn,
      S.NETWORK.pzn,
      S.TOUR_DEVIATION.pzn,
    ]);
    expect(result.ok && result.value.availablePzns).toEqual([
      '04114918',
      S.PARTIAL.pzn,
      S.TOUR_DEVIATION.pzn,
    ]);
  });

  it('answers a PZN block with at most 10 000 PZNs of the block that have a valid check digit', async () => {
    const response = await sandbox.ok(verfuegbarkeitAnfragenBulk, {
      clientSoftwareId: CLIENT_ID,
      id: uuid(),
      query: { kind: 'block', firstPzn: '04100000' },
    });
    expect(response.availablePzns.length).toBeGreaterThan(6_000);
    expect(response.availablePzns.length).toBeLessThanOrEqual(10_000);
    expect(
      response.availablePzns.every((p) => p >= '04100000' && p <= '04199999' && hasValidCheckDigit(p)),
    ).toBe(true);
  });

  it('refuses a block start that does not end in 00000, and duplicate PZNs', async () => {
    const block = await sandbox.fails(verfuegbarkeitAnfragenBulk, {
      clientSoftwareId: CLIENT_ID,
      id: uuid(),
      query: { kind: 'block', firstPzn: '04100010' },
    });
    expect(block).toMatchObject({ fault: { kind: 'ValidationFault' } });
    const duplicate = await bulk(['04114918', '04114918']);
    expect(!duplicate.ok && duplicate.error).toMatchObject({ fault: { kind: 'ValidationFault' } });
  });

  it('answers AuthorizationFaultInfo when bulk availability is not agreed (user name with nobulk)', async () => {
    const result = await bulk(['04114918'], 'apo1NoBulk');
    expect(!result.ok && result.error).toMatchObject({
      reason: 'soap_fault',
      maybeDelivered: false,
      fault: { kind: 'AuthorizationFault', errorCode: 'A001' },
    });
  });

  it('works in v1 as well', async () => {
    const response = await sandbox.ok(
      verfuegbarkeitAnfragenBulk,
      { clientSoftwareId: CLIENT_ID, id: uuid(), query: { kind: 'list', pzns: ['04114918', S.DISPO.pzn] } },
      { version: 1 },
    );
    expect(response.availablePzns).toEqual(['04114918']);
  });
});
