import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import type { Msv3Version } from '../msv3/envelope.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import { dokumentAbfragen } from '../msv3/operations/dokument-abfragen.js';
import { lieferavisAbfrageHist } from '../msv3/operations/lieferavis-abfrage-hist.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { lieferavisBestaetigen } from '../msv3/operations/lieferavis-bestaetigen.js';
import type { Msv3Operation } from '../msv3/operations/operation.js';
import { retourenavisAnfragen } from '../msv3/operations/retourenavis-anfragen.js';
import { retourenavisAnkuendigen } from '../msv3/operations/retourenavis-ankuendigen.js';
import { ruecknahmeangebotAnfordern } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { verbindungTesten } from '../msv3/operations/verbindung-testen.js';
import { verfuegbarkeitAnfragen } from '../msv3/operations/verfuegbarkeit-anfragen.js';
import { verfuegbarkeitAnfragenBulk } from '../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { vertragsdatenAbfragen } from '../msv3/operations/vertragsdaten-abfragen.js';
import { validateEnvelopes, xsdUnavailableReason } from '../msv3/test-support/xsd.js';
import { SCENARIO_PZNS, SUBSTITUTE_PZN } from './scenarios.js';
import {
  availabilityRequest,
  basic,
  CLIENT_ID,
  type Line,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';

/**
 * Everything the mock writes, checked against the original MSV3 XSDs with xmllint: every operation in
 * v1 and v2, the answers rich in variants (every part type, substitutions, Auftragsfehler, night mode,
 * shortages, portions, PDFs) and every fault bean. Skips loudly without xmllint or the XSD folder.
 */

const S = SCENARIO_PZNS;
let sandbox: Sandbox;
const collected: Record<Msv3Version, { label: string; body: string }[]> = { 1: [], 2: [] };

async function send<Req, Res>(
  label: string,
  operation: Msv3Operation<Req, Res>,
  request: Req,
  version: Msv3Version,
  username = 'apoXsd',
): Promise<string> {
  const response = await sandbox.raw(operation.encodeRequest(version, request), {
    path: `/xsd/msv3/v${version}.0/${operation.name}`,
    authorization: basic(username, 'x'),
  });
  expect(response.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
  collected[version].push({ label: `v${version} ${label} (HTTP ${response.status})`, body: response.body });
  return response.body;
}

const EVERY_ARTICLE: Line[] = [
  ['04114918', 3, 'Normal'],
  ['01234567', 9_999, 'MaxDispo'],
  ['07654321', 9_999, 'Normal'],
  [S.NOT_DELIVERABLE.pzn, 2, 'MaxDispo'],
  [S.PARTIAL.pzn, 5, 'MaxDispo'],
  [S.BACK_ORDER.pzn, 4, 'MaxNachlieferung'],
  [S.SUBSTITUTION.pzn, 2, 'Normal'],
  [S.TOUR_DEVIATION.pzn, 1, 'MaxVerbund'],
  [S.NETWORK.pzn, 7, 'Normal'],
  [S.DISPO.pzn, 1, 'MaxNachlieferung'],
  [S.DELIVERY_SHORTAGE.pzn, 3, 'Normal'],
  ['4006381333931', 1, 'Normal'],
];

async function exerciseEveryOperation(version: Msv3Version): Promise<void> {
  await send('verbindungTesten', verbindungTesten, { clientSoftwareId: CLIENT_ID }, version);
  const articles = EVERY_ARTICLE.map(([pzn, quantity]): [string, number] => [pzn, quantity]);
  await send('verfuegbarkeitAnfragen', verfuegbarkeitAnfragen, availabilityRequest(articles), version);
  await send(
    'verfuegbarkeitAnfragen unspecific',
    verfuegbarkeitAnfragen,
    availabilityRequest(articles),
    version,
    'apoXsdUnspecific',
  );
  await send(
    'verfuegbarkeitAnfragen nosubst',
    verfuegbarkeitAnfragen,
    availabilityRequest(articles),
    version,
    'apoXsdNosubst',
  );
  const bulk = { clientSoftwareId: CLIENT_ID, id: uuid() };
  await send(
    'bulk list',
    verfuegbarkeitAnfragenBulk,
    { ...bulk, query: { kind: 'list', pzns: articles.map((a) => a[0]) } },
    version,
  );
  await send(
    'bulk block',
    verfuegbarkeitAnfragenBulk,
    { ...bulk, query: { kind: 'block', firstPzn: '00100000' } },
    version,
  );
  await send(
    'bulk not agreed',
    verfuegbarkeitAnfragenBulk,
    { ...bulk, query: { kind: 'list', pzns: ['04114918'] } },
    version,
    'apoXsdNobulk',
  );
  await send(
    'bulk empty answer',
    verfuegbarkeitAnfragenBulk,
    { ...bulk, query: { kind: 'list', pzns: [S.DISPO.pzn] } },
    version,
  );

  const order = orderRequest(
    subOrder(EVERY_ARTICLE),
    subOrder([[S.ORDER_REJECTED.pzn, 1]]),
    subOrder([['04114918', 1]], { orderType: 'SONDER' }),
    subOrder([['04114918', 1]], { orderType: 'VERSAND', containerId: 'KISTE1' }),
  );
  await send('bestellen', bestellen, order, version);
  await send('bestellen repeated', bestellen, order, version);
  await send(
    'bestellen versand',
    bestellen,
    orderRequest(subOrder([['04114918', 1]], { orderType: 'VERSAND', containerId: 'K2' })),
    version,
    'apoXsdVersand',
  );
  const night = orderRequest(subOrder([[S.NIGHT_MODE.pzn, 1]]));
  await send('bestellen night', bestellen, night, version);
  await send(
    'bestellen invalid',
    bestellen,
    orderRequest(subOrder([['04114918', 1]], { containerId: 'X' })),
    version,
  );
  const status = (orderId: string) => ({ clientSoftwareId: CLIENT_ID, orderId });
  await send('status available', bestellstatusAbfragen, status(order.id), version);
  await send('status night', bestellstatusAbfragen, status(night.id), version);
  await send('status unknown', bestellstatusAbfragen, status(uuid()), version);
  await send('status bad id', bestellstatusAbfragen, status('4711'), version);
  const contract = { clientSoftwareId: CLIENT_ID, ...(version === 2 ? { manualQuery: false } : {}) };
  await send('vertragsdatenAbfragen', vertragsdatenAbfragen, contract, version);
  await send(
    'vertragsdatenAbfragen markers',
    vertragsdatenAbfragen,
    contract,
    version,
    'apoNobulkNoreturnsVersand',
  );
  const offer = { clientSoftwareId: CLIENT_ID, id: uuid(), articles: [{ pzn: '04114918', quantity: 2 }] };
  await send('ruecknahmeangebot', ruecknahmeangebotAnfordern, offer, version);
  await send('ruecknahmeangebot not agreed', ruecknahmeangebotAnfordern, offer, version, 'apoXsdNoreturns');
  await send('server fault', verfuegbarkeitAnfragen, availabilityRequest([[S.SERVER_FAULT.pzn, 1]]), version);
  await send(
    'denial of service',
    verfuegbarkeitAnfragen,
    availabilityRequest([[S.DENIAL_OF_SERVICE.pzn, 1]]),
    version,
  );
  if (version === 1) return;

  const fresh = await sandbox.ok(
    lieferavisAbfrageNeu,
    { clientSoftwareId: CLIENT_ID },
    { tenant: 'xsd', username: 'apoXsd' },
  );
  const notices = fresh.notices;
  await send('lieferavisAbfrageNeu', lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, version);
  await send(
    'lieferavisAbfrageNeu empty',
    lieferavisAbfrageNeu,
    { clientSoftwareId: CLIENT_ID },
    version,
    'apoXsdNobody',
  );
  const first = notices[0]!;
  await send(
    'lieferavisAbfrageHist',
    lieferavisAbfrageHist,
    { clientSoftwareId: CLIENT_ID, barcodeReference: first.barcodeReference },
    version,
  );
  await send(
    'lieferavisAbfrageHist unknown',
    lieferavisAbfrageHist,
    { clientSoftwareId: CLIENT_ID, deliveryNoteNumber: 'LS0' },
    version,
  );
  await send(
    'lieferavisAbfrageHist neither',
    lieferavisAbfrageHist,
    { clientSoftwareId: CLIENT_ID },
    version,
  );
  await send(
    'lieferavisBestaetigen',
    lieferavisBestaetigen,
    { clientSoftwareId: CLIENT_ID, deliveryNoteNumbers: [first.deliveryNoteNumber] },
    version,
  );
  const positions = [
    {
      positionRef: 1,
      deliveryNoteNumber: first.deliveryNoteNumber,
      pzn: '04114918',
      quantity: 1,
      reason: 'Beschaedigt' as const,
    },
    {
      positionRef: 2,
      deliveryNoteNumber: first.deliveryNoteNumber,
      pzn: '04114918',
      quantity: 1,
      reason: 'VerfallZuKurz' as const,
      batch: 'CH1',
      expiryDate: '2027-01-31',
    },
    {
      positionRef: 3,
      deliveryNoteNumber: first.deliveryNoteNumber,
      pzn: '01234567',
      quantity: 9_999,
      reason: 'ZuvielGeliefert' as const,
    },
    {
      positionRef: 4,
      deliveryNoteNumber: 'LS0',
      pzn: '04114918',
      quantity: 1,
      reason: 'Bestellfehler' as const,
    },
    {
      positionRef: 5,
      deliveryNoteNumber: first.deliveryNoteNumber,
      pzn: SUBSTITUTE_PZN,
      quantity: 1,
      reason: 'BerechnetNichtGeliefert' as const,
    },
    {
      positionRef: 6,
      deliveryNoteNumber: first.deliveryNoteNumber,
      pzn: '07777777',
      quantity: 1,
      reason: 'Bestellfehler' as const,
    },
  ];
  await send(
    'retourenavisAnfragen',
    retourenavisAnfragen,
    { clientSoftwareId: CLIENT_ID, enquiry: { id: uuid(), supportId: 1, positions } },
    version,
  );
  const announced = await send(
    'retourenavisAnkuendigen',
    retourenavisAnkuendigen,
    {
      clientSoftwareId: CLIENT_ID,
      announcement: { id: uuid(), supportId: 2, iban: 'DE02120300000000202051', positions },
    },
    version,
  );
  const slipId = /DokumentID="([^"]+)"/.exec(announced)?.[1];
  await send(
    'dokumentAbfragen note',
    dokumentAbfragen,
    { clientSoftwareId: CLIENT_ID, documentId: first.documentId },
    version,
  );
  await send(
    'dokumentAbfragen slip',
    dokumentAbfragen,
    { clientSoftwareId: CLIENT_ID, documentId: slipId },
    version,
  );
  await send('dokumentAbfragen unknown', dokumentAbfragen, { documentId: uuid() }, version);
}

beforeAll(async () => {
  sandbox = await startSandbox({ clock: manualClock() });
});
afterAll(() => sandbox.close());

describe.skipIf(xsdUnavailableReason !== null)(
  'everything the mock writes validates against the MSV3 XSDs',
  () => {
    it.each([1, 2] as const)('v%i', async (version) => {
      await exerciseEveryOperation(version);
      const results = await validateEnvelopes(
        version,
        collected[version].map((c) => c.body),
      );
      const invalid = results.flatMap((r, i) =>
        r.valid ? [] : [`${collected[version][i]!.label}: ${r.errors}`],
      );
      expect(invalid).toEqual([]);
      expect(collected[version].length).toBeGreaterThanOrEqual(version === 1 ? 23 : 34);
    });
  },
);
