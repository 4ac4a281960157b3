import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryNoticesResponse, newDeliveryNoticesRequest } from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  V1,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import type { DeliveryNotice, DeliveryNoticeLine } from './lieferavis.js';
import { lieferavisAbfrageNeu } from './lieferavis-abfrage-neu.js';

const notice: DeliveryNotice = {
  deliveryNoteNumber: 'LS2025031800123',
  barcodeReference: '0#LS2025031800123',
  orderType: 'NORMAL',
  orderLabel: 'K1',
  documentDate: '2025-03-18',
  deliveryTime: '2025-03-18T14:30:00+01:00',
  tour: 'Mittagstour',
  hasShortages: true,
  lines: [
    {
      pzn: '04114918',
      articleName: 'ASPIRIN 500MG TABLETTEN',
      delivered: [
        {
          orderId: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f',
          quantity: 3,
          parcelNumber: 'WANNE0001',
          batch: 'BX1234',
          expiryDate: '2027-11-30',
        },
      ],
      shortages: [],
    },
    {
      pzn: '01234567',
      delivered: [{ quantity: 2, parcelNumber: 'WANNE0001' }],
      shortages: [{ quantity: 2 }],
    },
  ],
  documentId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e',
};

describe.skipIf(samplesUnavailableReason !== null)('lieferavisAbfrageNeu shared samples', () => {
  it('decodes the request sample', () => {
    expect(lieferavisAbfrageNeu.decodeRequest(readSample('v2/lieferavisAbfrageNeu.request.xml'))).toEqual({
      kind: 'ok',
      value: { version: 2, request: { clientSoftwareId: 'ExampleWawi 1.4.2' } },
    });
  });

  it('decodes the response sample: lines with batches, expiry, parcel and a shortage', () => {
    expect(lieferavisAbfrageNeu.decodeResponse(readSample('v2/lieferavisAbfrageNeu.response.xml'))).toEqual({
      kind: 'ok',
      value: { notices: [notice] },
    });
  });
});

describe('lieferavisAbfrageNeu round trips (v2)', () => {
  it('decodes every encoded request to the same model', () => {
    fc.assert(
      fc.property(newDeliveryNoticesRequest, (request) => {
        expect(lieferavisAbfrageNeu.decodeRequest(lieferavisAbfrageNeu.encodeRequest(2, request))).toEqual({
          kind: 'ok',
          value: { version: 2, request },
        });
      }),
    );
  });

  it('decodes every encoded response to the same model', () => {
    fc.assert(
      fc.property(deliveryNoticesResponse, (response) => {
        const xml = lieferavisAbfrageNeu.encodeResponse(2, response);
        expect(lieferavisAbfrageNeu.decodeResponse(xml, 2)).toEqual({ kind: 'ok', value: response });
      }),
    );
  });
});

const fullLine: DeliveryNoticeLine = {
  pzn: '04114918',
  delivered: Array.from({ length: 99 }, () => ({ quantity: 1 })),
  shortages: Array.from({ length: 99 }, () => ({ quantity: 1 })),
};
const largestNotices = { notices: Array.from({ length: 999 }, () => notice) };
const longestNotice = {
  notices: [{ ...notice, lines: [fullLine, ...Array.from({ length: 9998 }, () => notice.lines[1]!)] }],
};

describe.skipIf(xsdUnavailableReason !== null)('lieferavisAbfrageNeu against the original XSD', () => {
  it('accepts 150 generated requests and responses and the largest lists, refuses broken ones', async () => {
    const requests = fc
      .sample(newDeliveryNoticesRequest, 150)
      .map((r) => lieferavisAbfrageNeu.encodeRequest(2, r));
    const responses = fc
      .sample(deliveryNoticesResponse, 150)
      .map((r) => lieferavisAbfrageNeu.encodeResponse(2, r));
    const fixed = lieferavisAbfrageNeu.encodeResponse(2, { notices: [notice] });
    const broken = [
      fixed.replace('MengeGeliefert="3"', 'MengeGeliefert="0"'),
      fixed.replace('Auftragskennung="K1"', 'Auftragskennung="k1"'),
      lieferavisAbfrageNeu.encodeResponse(2, {
        notices: [
          { ...notice, lines: [{ ...fullLine, delivered: [...fullLine.delivered, { quantity: 1 }] }] },
        ],
      }),
    ];
    await expectSchemaVerdicts(
      2,
      [
        ...requests,
        ...responses,
        lieferavisAbfrageNeu.encodeResponse(2, largestNotices),
        lieferavisAbfrageNeu.encodeResponse(2, longestNotice),
      ],
      broken,
    );
  });
});

describe('lieferavisAbfrageNeu limits', () => {
  it('decodes the largest lists and refuses one more notice, line, portion or shortage', () => {
    expect(
      lieferavisAbfrageNeu.decodeResponse(lieferavisAbfrageNeu.encodeResponse(2, largestNotices)).kind,
    ).toBe('ok');
    expect(
      lieferavisAbfrageNeu.decodeResponse(lieferavisAbfrageNeu.encodeResponse(2, longestNotice)).kind,
    ).toBe('ok');
    const decode = (notices: DeliveryNotice[]) =>
      lieferavisAbfrageNeu.decodeResponse(lieferavisAbfrageNeu.encodeResponse(2, { notices }));
    expectInvalid(
      decode([...largestNotices.notices, notice]),
      'return/Lieferavis: 1000 elements, at most 999',
    );
    expectInvalid(
      decode([{ ...notice, lines: [...longestNotice.notices[0]!.lines, fullLine] }]),
      'return/Lieferavis[1]/Zeile: 10000 elements, at most 9999',
    );
    expectInvalid(
      decode([{ ...notice, lines: [{ ...fullLine, delivered: [...fullLine.delivered, { quantity: 1 }] }] }]),
      'return/Lieferavis[1]/Zeile[1]/Anteil: 100 elements, at most 99',
    );
    expectInvalid(
      decode([{ ...notice, lines: [{ ...fullLine, shortages: [...fullLine.shortages, { quantity: 1 }] }] }]),
      'return/Lieferavis[1]/Zeile[1]/Fehlmenge: 100 elements, at most 99',
    );
  });
});

describe('lieferavisAbfrageNeu decoders refuse what the schema refuses', () => {
  const xml = lieferavisAbfrageNeu.encodeResponse(2, { notices: [notice] });
  const decode = (s: string) => lieferavisAbfrageNeu.decodeResponse(s);

  it('exists only in v2', () => {
    expectInvalid(
      lieferavisAbfrageNeu.decodeRequest(
        soapEnvelope(
          '<m:lieferavisAbfrageNeu><clientSoftwareKennung>a</clientSoftwareKennung></m:lieferavisAbfrageNeu>',
          V1,
        ),
      ),
      'lieferavisAbfrageNeu is not part of MSV3 v1',
    );
    expectInvalid(decode(xml.replace('urn:msv3:v2', V1)), 'not part of MSV3 v1');
    expect(() => lieferavisAbfrageNeu.encodeRequest(1, { clientSoftwareId: 'a' })).toThrow(RangeError);
    expect(() => lieferavisAbfrageNeu.soapAction(1)).toThrow(RangeError);
    expect(lieferavisAbfrageNeu.soapAction(2)).toBe('urn:msv3:v2:Msv3:lieferavisAbfrageNeu');
  });

  it('refuses a missing return, missing required attributes and a line without PZN', () => {
    expectInvalid(
      decode(soapEnvelope('<m:lieferavisAbfrageNeuResponse/>')),
      'return: missing required element',
    );
    expectInvalid(
      decode(xml.replace(' Belegdatum="2025-03-18"', '')),
      'return/Lieferavis[1]/@Belegdatum: missing required attribute',
    );
    expectInvalid(decode(xml.replace(' FehlmengenEnthalten="true"', '')), '@FehlmengenEnthalten: missing');
    expectInvalid(
      decode(xml.replace('<m:Zeile PZN="1234567">', '<m:Zeile>')),
      'return/Lieferavis[1]/Zeile[2]/@PZN: missing',
    );
    expectInvalid(
      decode(xml.replace(/<m:Zeile .*<\/m:Zeile>/, '')),
      'return/Lieferavis[1]/Zeile: missing required element (found <m:DokumentId>',
    );
  });

  it('refuses bad patterns, enums, dates and numbers with the path of the attribute', () => {
    expectInvalid(
      decode(xml.replace('Lieferscheinnummer="LS2025031800123"', 'Lieferscheinnummer="LS 123"')),
      'return/Lieferavis[1]/@Lieferscheinnummer',
    );
    expectInvalid(
      decode(xml.replace('BarcodeReferenz="0#LS2025031800123"', 'BarcodeReferenz="0LS2025031800123"')),
      '@BarcodeReferenz',
    );
    expectInvalid(
      decode(xml.replace('Auftragsart="NORMAL"', 'Auftragsart="Normal"')),
      "@Auftragsart: 'Normal' is not one of",
    );
    expectInvalid(decode(xml.replace('Auftragskennung="K1"', 'Auftragskennung="k1"')), '@Auftragskennung');
    expectInvalid(decode(xml.replace('2025-03-18T14:30:00+01:00', '2025-03-18 14:30')), '@Lieferzeitpunkt');
    expectInvalid(decode(xml.replace('2027-11-30', '2027-11-31')), 'Zeile[1]/Anteil[1]/@Verfalldatum');
    expectInvalid(
      decode(xml.replace('MengeGeliefert="3"', 'MengeGeliefert="0"')),
      'Zeile[1]/Anteil[1]/@MengeGeliefert: 0 is outside',
    );
    expectInvalid(decode(xml.replace('Menge="2"', 'Menge="2147483648"')), 'Zeile[2]/Fehlmenge[1]/@Menge');
    expectInvalid(decode(xml.replace('WANNE0001', 'W'.repeat(21))), 'Anteil[1]/@Packstuecknummer: length 21');
    expectInvalid(
      decode(xml.replace('AuftragsID="0c1d2e3f', 'AuftragsID="xc1d2e3f')),
      'Anteil[1]/@AuftragsID',
    );
    expectInvalid(decode(xml.replace('>7b8c9d0e-', '>7b8c9d0e')), 'return/Lieferavis[1]/DokumentId');
    expectInvalid(
      decode(xml.replace('ASPIRIN 500MG TABLETTEN', 'A'.repeat(51))),
      '@Artikelbezeichnung: length 51',
    );
  });

  it('refuses elements in the wrong order, place or namespace and unknown attributes', () => {
    const fehlmengeFirst = xml.replace(
      '<m:Anteil MengeGeliefert="2" Packstuecknummer="WANNE0001"/><m:Fehlmenge Menge="2"/>',
      '<m:Fehlmenge Menge="2"/><m:Anteil MengeGeliefert="2" Packstuecknummer="WANNE0001"/>',
    );
    expectInvalid(decode(fehlmengeFirst), 'Zeile[2]/Anteil: unexpected element');
    expectInvalid(
      decode(
        xml
          .replace('<m:Zeile PZN="1234567">', '<Zeile PZN="1234567">')
          .replace(/<\/m:Zeile><m:DokumentId/, '</Zeile><m:DokumentId'),
      ),
      '(unqualified)',
    );
    expectInvalid(
      decode(xml.replace('<m:Fehlmenge Menge="2"/>', '<m:Fehlmenge Menge="2">2</m:Fehlmenge>')),
      'Fehlmenge[1]/text(): character content is not allowed',
    );
    expectInvalid(
      decode(xml.replace('<m:Fehlmenge Menge="2"/>', '<m:Fehlmenge Menge="2" Grund="x"/>')),
      'Fehlmenge[1]/@Grund: attribute not allowed',
    );
  });
});
