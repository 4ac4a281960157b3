import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEnvelope } from '../msv3/envelope.js';
import { type Sandbox, startSandbox } from './test-support/sandbox.js';

/** Requests the gateway's encoders would never write, sent as raw envelopes. */

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

const ID = '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b';
const ENV_OPEN =
  '<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" ';
const wrap = (payload: string, version: 1 | 2 = 2) =>
  `${ENV_OPEN}xmlns:m="urn:msv3:v${version}"><env:Body>${payload}</env:Body></env:Envelope>`;
const kennung = '<clientSoftwareKennung>Test 1.0</clientSoftwareKennung>';
const article = (pzn: number, menge: number | string, attrs = ' Bedarf="direkt"') =>
  `<m:Artikel${attrs}><m:Pzn>${pzn}</m:Pzn><m:Menge>${menge}</m:Menge></m:Artikel>`;
const availability = (articles: string, version: 1 | 2 = 2, requestAttrs = '') =>
  wrap(
    `<m:verfuegbarkeitAnfragen>${kennung}<verfuegbarkeitsanfrage Id="${ID}"${requestAttrs}>${articles}</verfuegbarkeitsanfrage></m:verfuegbarkeitAnfragen>`,
    version,
  );
const order = (auftrag: string) =>
  wrap(
    `<m:bestellen>${kennung}<bestellung Id="${ID}" BestellSupportId="1">${auftrag}</bestellung></m:bestellen>`,
  );
const auftrag = (attrs: string, positions: string) =>
  `<m:Auftraege Id="0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f" ${attrs}>${positions}</m:Auftraege>`;
const position = (pzn: number, menge: number, vorgabe = 'Normal') =>
  `<m:Positionen><m:Pzn>${pzn}</m:Pzn><m:Menge>${menge}</m:Menge><m:Liefervorgabe>${vorgabe}</m:Liefervorgabe></m:Positionen>`;
const NORMAL = 'Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="2"';

async function expectValidationFault(body: string, technical?: RegExp): Promise<void> {
  // No version segment in the path: the body's namespace alone decides (v1 and v2 cases below).
  const response = await sandbox.raw(body, { path: '/test/msv3/any' });
  expect(response.status).toBe(500);
  expect(response.headers['content-type']).toBe('application/soap+xml; charset=utf-8');
  const decoded = openEnvelope(response.body);
  expect(decoded.kind).toBe('fault');
  if (decoded.kind !== 'fault') return;
  expect(decoded.fault).toMatchObject({ kind: 'ValidationFault', soapCode: 'Sender', errorCode: 'V001' });
  if (technical) expect(decoded.fault.technicalText).toMatch(technical);
}

describe('requests that break the schema get a ValidationFault', () => {
  it.each([
    [
      'no clientSoftwareKennung',
      wrap(
        `<m:verfuegbarkeitAnfragen><verfuegbarkeitsanfrage Id="${ID}">${article(4114918, 1)}</verfuegbarkeitsanfrage></m:verfuegbarkeitAnfragen>`,
      ),
      /clientSoftwareKennung/,
    ],
    [
      'a qualified clientSoftwareKennung',
      wrap(`<m:verbindungTesten><m:clientSoftwareKennung>x</m:clientSoftwareKennung></m:verbindungTesten>`),
      /clientSoftwareKennung/,
    ],
    ['quantity 0', availability(article(4114918, 0)), /Menge/],
    ['quantity 100000 in v2', availability(article(4114918, 100_000)), /Menge/],
    [
      'quantity 10000 in v1',
      availability(article(4114918, 10_000, ''), 1, ' EinsAusNBedarf="false"'),
      /Menge/,
    ],
    ['a quantity that is no number', availability(article(4114918, 'drei')), /Menge/],
    [
      'a v2 Bedarf attribute in v1',
      availability(article(4114918, 1), 1, ' EinsAusNBedarf="false"'),
      /Bedarf/,
    ],
    ['v1 without EinsAusNBedarf', availability(article(4114918, 1, ''), 1), /EinsAusNBedarf/],
    ['an unknown Bedarf', availability(article(4114918, 1, ' Bedarf="dringend"')), /Bedarf/],
    [
      '51 articles',
      availability(Array.from({ length: 51 }, (_, i) => article(1000 + i, 1)).join('')),
      /Artikel/,
    ],
    ['no article', availability(''), /Artikel/],
    ['an Id that is no uuid', availability(article(4114918, 1)).replace(ID, '4711'), /Id/],
    ['an unknown element', availability(`${article(4114918, 1)}<m:Rabatt>5</m:Rabatt>`), /Rabatt/],
    [
      'an unknown Auftragsart',
      order(auftrag('Auftragsart="EILIG" Auftragskennung="K1" AuftragsSupportID="2"', position(4114918, 1))),
      /Auftragsart/,
    ],
    [
      'a lower-case Auftragskennung',
      order(auftrag('Auftragsart="NORMAL" Auftragskennung="k1" AuftragsSupportID="2"', position(4114918, 1))),
      /Auftragskennung/,
    ],
    ['an unknown Liefervorgabe', order(auftrag(NORMAL, position(4114918, 1, 'Sofort'))), /Liefervorgabe/],
    ['a sub-order without positions', order(auftrag(NORMAL, '')), /Positionen/],
    [
      'more than 1000 positions in one order',
      order(auftrag(NORMAL, Array.from({ length: 1001 }, (_, i) => position(2000 + i, 1)).join(''))),
      /1000/,
    ],
  ])('%s', async (_case, body, technical) => {
    await expectValidationFault(body, technical);
  });
});

describe('envelopes that are no MSV3 request get a ValidationFault', () => {
  it.each([
    ['malformed XML', `${ENV_OPEN}><env:Body><m:verbindungTesten>`],
    [
      'a DOCTYPE',
      `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]>${wrap('<m:verbindungTesten/>').slice(38)}`,
    ],
    ['no envelope', '<verbindungTesten/>'],
    ['an empty Body', wrap('')],
    [
      'two elements in the Body',
      wrap(
        `<m:verbindungTesten>${kennung}</m:verbindungTesten><m:verbindungTesten>${kennung}</m:verbindungTesten>`,
      ),
    ],
    ['not XML at all', 'hallo'],
  ])('%s', async (_case, body) => {
    await expectValidationFault(body);
  });
});

describe('requests that break business rules get a ValidationFault', () => {
  it.each([
    [
      'a PZN twice in an availability request',
      availability(article(4114918, 1) + article(4114918, 2)),
      /occurs more than once/,
    ],
    [
      'a bestellId that is no uuid',
      wrap(`<m:bestellstatusAbfragen>${kennung}<bestellId>4711</bestellId></m:bestellstatusAbfragen>`),
      /bestellId/,
    ],
    [
      'lieferavisAbfrageHist with neither attribute',
      wrap(`<m:lieferavisAbfrageHist>${kennung}<lieferavisAbfrageHistAbfrage/></m:lieferavisAbfrageHist>`),
      /Lieferscheinnummer or @BarcodeReferenz/,
    ],
    ['dokumentAbfragen without a document id', wrap('<m:dokumentAbfragen/>'), /DokumentId is missing/],
    [
      'retourenavisAnfragen without an enquiry',
      wrap('<m:retourenavisAnfragen/>'),
      /retourenavisAnfrageType is missing/,
    ],
    [
      'a PznBlock that does not start a block',
      wrap(
        `<m:verfuegbarkeitAnfragenBulk>${kennung}<verfuegbarkeitsanfrageBulk Id="${ID}"><m:PznBlock>4100001</m:PznBlock></verfuegbarkeitsanfrageBulk></m:verfuegbarkeitAnfragenBulk>`,
      ),
      /00000/,
    ],
    [
      'a PZN twice in a bulk list',
      wrap(
        `<m:verfuegbarkeitAnfragenBulk>${kennung}<verfuegbarkeitsanfrageBulk Id="${ID}"><m:Pzn>1</m:Pzn><m:Pzn>1</m:Pzn></verfuegbarkeitsanfrageBulk></m:verfuegbarkeitAnfragenBulk>`,
      ),
      /occurs more than once/,
    ],
  ])('%s', async (_case, body, technical) => {
    await expectValidationFault(body, technical);
  });
});

describe('a request body that is a SOAP fault', () => {
  it('names no operation, so it gets the plain dispatch fault', async () => {
    const fault = wrap(
      '<env:Fault><env:Code><env:Value>env:Sender</env:Value></env:Code><env:Reason><env:Text xml:lang="de">x</env:Text></env:Reason></env:Fault>',
    );
    const response = await sandbox.raw(fault);
    expect(response.status).toBe(500);
    expect(response.body).toContain(
      'Cannot find dispatch method for {http://www.w3.org/2003/05/soap-envelope}Fault',
    );
  });
});
