import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import { orderStatusRequest, orderStatusResponse } from '../test-support/arbitraries/ordering.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import { bestellstatusAbfragen } from './bestellstatus-abfragen.js';

const versions: Msv3Version[] = [1, 2];
const ORDER_ID = '9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f';

describe.skipIf(samplesUnavailableReason !== null)('bestellstatusAbfragen shared samples', () => {
  it('decodes the request with the earlier order id', () => {
    expect(bestellstatusAbfragen.decodeRequest(readSample('v2/bestellstatusAbfragen.request.xml'))).toEqual({
      kind: 'ok',
      value: { version: 2, request: { clientSoftwareId: 'ExampleWawi 1.4.2', orderId: ORDER_ID } },
    });
  });

  it('decodes an unknown id with a nil BestellSupportId and no sub-orders', () => {
    expect(
      bestellstatusAbfragen.decodeResponse(readSample('v2/bestellstatusAbfragen.response.unbekannt.xml')),
    ).toEqual({
      kind: 'ok',
      value: { id: ORDER_ID, status: 'KennungUnbekannt', supportId: null, subOrders: [] },
    });
  });

  it('decodes an available answer with the repeated sub-orders', () => {
    expect(
      bestellstatusAbfragen.decodeResponse(readSample('v2/bestellstatusAbfragen.response.verfuegbar.xml'), 2),
    ).toEqual({
      kind: 'ok',
      value: {
        id: ORDER_ID,
        status: 'BestellantwortVerfuegbar',
        supportId: 4711,
        subOrders: [
          {
            id: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f',
            orderType: 'NORMAL',
            orderLabel: 'K1',
            supportId: 4712,
            positions: [
              {
                pzn: '04114918',
                quantity: 3,
                deliveryInstruction: 'Normal',
                parts: [
                  {
                    quantity: 3,
                    type: 'Normal',
                    deliveryTime: '2025-03-18T14:30:00+01:00',
                    defectReason: 'KeineAngabe',
                    tourId: 'T12',
                    tourDeviation: false,
                  },
                ],
              },
            ],
          },
        ],
      },
    });
  });

  it('turns the server fault sample into a fault outcome', () => {
    const result = bestellstatusAbfragen.decodeResponse(readSample('v2/fault.server.xml'));
    expect(result.kind === 'fault' && result.fault.kind).toBe('ServerFault');
  });
});

describe.each(versions)('bestellstatusAbfragen v%i round trips', (version) => {
  it('decodes every encoded request, whatever the bestellId text, to the same model', () => {
    fc.assert(
      fc.property(orderStatusRequest, (request) => {
        expect(
          bestellstatusAbfragen.decodeRequest(bestellstatusAbfragen.encodeRequest(version, request)),
        ).toEqual({
          kind: 'ok',
          value: { version, request },
        });
      }),
      { numRuns: 200 },
    );
  });

  it('decodes every encoded answer to the same model', () => {
    fc.assert(
      fc.property(orderStatusResponse(version), (response) => {
        const xml = bestellstatusAbfragen.encodeResponse(version, response);
        expect(bestellstatusAbfragen.decodeResponse(xml, version)).toEqual({ kind: 'ok', value: response });
      }),
      { numRuns: 150 },
    );
  });
});

describe('bestellstatusAbfragen operation', () => {
  it('uses the soapAction of the WSDL, which differs in v2', () => {
    expect(bestellstatusAbfragen.soapAction(1)).toBe('urn:msv3:v1:Msv3:bestellstatusAbfragen');
    expect(bestellstatusAbfragen.soapAction(2)).toBe('urn:msv3:v2:Msv3:bestellantwortAbfragen');
  });

  it('writes a nil BestellSupportId as a present, empty element', () => {
    const xml = bestellstatusAbfragen.encodeResponse(2, {
      id: ORDER_ID,
      status: 'BestellantwortNichtVerfuegbar',
      supportId: null,
      subOrders: [],
    });
    expect(xml).toContain(
      `<return Id="${ORDER_ID}" Status="BestellantwortNichtVerfuegbar"><m:BestellSupportId xsi:nil="true"/></return>`,
    );
  });
});

describe.skipIf(xsdUnavailableReason !== null)('bestellstatusAbfragen against the original XSD', () => {
  it.each(versions)(
    'accepts 150 generated v%i requests and 150 answers, and rejects broken ones',
    async (version) => {
      const requests = fc
        .sample(orderStatusRequest, 150)
        .map((r) => bestellstatusAbfragen.encodeRequest(version, r));
      const responses = fc
        .sample(orderStatusResponse(version), 150)
        .map((r) => bestellstatusAbfragen.encodeResponse(version, r));
      const answer = responses[0]!;
      const broken = [
        answer.replace(/<m:BestellSupportId[^>]*?(\/>|>[^<]*<\/m:BestellSupportId>)/, ''),
        answer.replace(/Status="[A-Za-z]+"/, 'Status="Verfuegbar"'),
      ];
      await expectSchemaVerdicts(version, [...requests, ...responses], broken);
    },
  );
});

describe('bestellstatusAbfragen decoders refuse what the schema refuses', () => {
  const response = (inner: string, attrs = `Id="${ORDER_ID}" Status="KennungUnbekannt"`) =>
    soapEnvelope(
      `<m:bestellstatusAbfragenResponse><return ${attrs}>${inner}</return></m:bestellstatusAbfragenResponse>`,
    );

  it('accepts the hand-written answer the refusals are variations of', () => {
    expect(
      bestellstatusAbfragen.decodeResponse(response('<m:BestellSupportId>1</m:BestellSupportId>')).kind,
    ).toBe('ok');
  });

  it.each([
    ['a missing BestellSupportId', response(''), 'return/BestellSupportId: missing required element'],
    [
      'an unknown Status',
      response('<m:BestellSupportId>1</m:BestellSupportId>', `Id="${ORDER_ID}" Status="Weg"`),
      "return/@Status: 'Weg' is not one of",
    ],
    [
      'a BestellSupportId of 0',
      response('<m:BestellSupportId>0</m:BestellSupportId>'),
      'return/BestellSupportId: 0 is outside 1..999999',
    ],
    [
      'a missing Id',
      response('<m:BestellSupportId>1</m:BestellSupportId>', 'Status="KennungUnbekannt"'),
      'return/@Id: missing required attribute',
    ],
    [
      'an unknown element after the sub-orders',
      response('<m:BestellSupportId>1</m:BestellSupportId><m:Hinweis/>'),
      'return/Hinweis: unexpected element',
    ],
  ])('refuses an answer with %s', (_name, xml, fragment) => {
    expectInvalid(bestellstatusAbfragen.decodeResponse(xml), fragment);
  });

  it.each([
    [
      'a missing bestellId',
      soapEnvelope(
        '<m:bestellstatusAbfragen><clientSoftwareKennung>W</clientSoftwareKennung></m:bestellstatusAbfragen>',
      ),
      'bestellId: missing required element',
    ],
    [
      'a qualified bestellId',
      soapEnvelope(
        `<m:bestellstatusAbfragen><clientSoftwareKennung>W</clientSoftwareKennung><m:bestellId>${ORDER_ID}</m:bestellId></m:bestellstatusAbfragen>`,
      ),
      'bestellId: missing required element (found <m:bestellId>',
    ],
    [
      'a bestellId with child elements',
      soapEnvelope(
        '<m:bestellstatusAbfragen><clientSoftwareKennung>W</clientSoftwareKennung><bestellId><x/></bestellId></m:bestellstatusAbfragen>',
      ),
      'bestellId: expected text, found child elements',
    ],
  ])('refuses a request with %s', (_name, xml, fragment) => {
    expectInvalid(bestellstatusAbfragen.decodeRequest(xml), fragment);
  });
});
