import { describe, expect, it } from 'vitest';
import { deliveryNoticesResponse, newDeliveryNoticesRequest } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedVariations,
  soapEnvelope,
  V1,
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

describeSamples(lieferavisAbfrageNeu, {
  'decodes the request sample': {
    request: 'v2/lieferavisAbfrageNeu.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2' },
  },
  'decodes the response sample: lines with batches, expiry, parcel and a shortage': {
    response: 'v2/lieferavisAbfrageNeu.response.xml',
    decodesTo: { notices: [notice] },
  },
});

describeRoundTrips(lieferavisAbfrageNeu, {
  request: newDeliveryNoticesRequest,
  response: deliveryNoticesResponse,
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

describeXsdValidity(lieferavisAbfrageNeu, {
  title: 'accepts 150 generated requests and responses and the largest lists, refuses broken ones',
  request: newDeliveryNoticesRequest,
  response: deliveryNoticesResponse,
  cases: () => {
    const fixed = lieferavisAbfrageNeu.encodeResponse(2, { notices: [notice] });
    return {
      valid: [
        lieferavisAbfrageNeu.encodeResponse(2, largestNotices),
        lieferavisAbfrageNeu.encodeResponse(2, longestNotice),
      ],
      invalid: [
        fixed.replace('MengeGeliefert="3"', 'MengeGeliefert="0"'),
        fixed.replace('Auftragskennung="K1"', 'Auftragskennung="k1"'),
        lieferavisAbfrageNeu.encodeResponse(2, {
          notices: [
            { ...notice, lines: [{ ...fullLine, delivered: [...fullLine.delivered, { quantity: 1 }] }] },
          ],
        }),
      ],
    };
  },
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
    expectRefusedVariations(decode, xml, [
      [' Belegdatum="2025-03-18"', '', 'return/Lieferavis[1]/@Belegdatum: missing required attribute'],
      [' FehlmengenEnthalten="true"', '', '@FehlmengenEnthalten: missing'],
      ['<m:Zeile PZN="1234567">', '<m:Zeile>', 'return/Lieferavis[1]/Zeile[2]/@PZN: missing'],
      [
        /<m:Zeile .*<\/m:Zeile>/,
        '',
        'return/Lieferavis[1]/Zeile: missing required element (found <m:DokumentId>',
      ],
    ]);
  });

  it('refuses bad patterns, enums, dates and numbers with the path of the attribute', () => {
    expectRefusedVariations(decode, xml, [
      [
        'Lieferscheinnummer="LS2025031800123"',
        'Lieferscheinnummer="LS 123"',
        'return/Lieferavis[1]/@Lieferscheinnummer',
      ],
      ['BarcodeReferenz="0#LS2025031800123"', 'BarcodeReferenz="0LS2025031800123"', '@BarcodeReferenz'],
      ['Auftragsart="NORMAL"', 'Auftragsart="Normal"', "@Auftragsart: 'Normal' is not one of"],
      ['Auftragskennung="K1"', 'Auftragskennung="k1"', '@Auftragskennung'],
      ['2025-03-18T14:30:00+01:00', '2025-03-18 14:30', '@Lieferzeitpunkt'],
      ['2027-11-30', '2027-11-31', 'Zeile[1]/Anteil[1]/@Verfalldatum'],
      ['MengeGeliefert="3"', 'MengeGeliefert="0"', 'Zeile[1]/Anteil[1]/@MengeGeliefert: 0 is outside'],
      ['Menge="2"', 'Menge="2147483648"', 'Zeile[2]/Fehlmenge[1]/@Menge'],
      ['WANNE0001', 'W'.repeat(21), 'Anteil[1]/@Packstuecknummer: length 21'],
      ['AuftragsID="0c1d2e3f', 'AuftragsID="xc1d2e3f', 'Anteil[1]/@AuftragsID'],
      ['>7b8c9d0e-', '>7b8c9d0e', 'return/Lieferavis[1]/DokumentId'],
      ['ASPIRIN 500MG TABLETTEN', 'A'.repeat(51), '@Artikelbezeichnung: length 51'],
    ]);
  });

  it('refuses elements in the wrong order, place or namespace and unknown attributes', () => {
    const unqualifiedLine = xml
      .replace('<m:Zeile PZN="1234567">', '<Zeile PZN="1234567">')
      .replace(/<\/m:Zeile><m:DokumentId/, '</Zeile><m:DokumentId');
    expectInvalid(decode(unqualifiedLine), '(unqualified)');
    expectRefusedVariations(decode, xml, [
      [
        '<m:Anteil MengeGeliefert="2" Packstuecknummer="WANNE0001"/><m:Fehlmenge Menge="2"/>',
        '<m:Fehlmenge Menge="2"/><m:Anteil MengeGeliefert="2" Packstuecknummer="WANNE0001"/>',
        'Zeile[2]/Anteil: unexpected element',
      ],
      [
        '<m:Fehlmenge Menge="2"/>',
        '<m:Fehlmenge Menge="2">2</m:Fehlmenge>',
        'Fehlmenge[1]/text(): character content is not allowed',
      ],
      [
        '<m:Fehlmenge Menge="2"/>',
        '<m:Fehlmenge Menge="2" Grund="x"/>',
        'Fehlmenge[1]/@Grund: attribute not allowed',
      ],
    ]);
  });
});
