import { describe, expect, it } from 'vitest';
import { orderStatusRequest, orderStatusResponse } from '../test-support/arbitraries/ordering.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  itRefuses,
  serverFaultSample,
  soapEnvelope,
} from '../test-support/codec-test-kit.js';
import { bestellstatusAbfragen } from './bestellstatus-abfragen.js';

const ORDER_ID = '9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f';

describeSamples(bestellstatusAbfragen, {
  'decodes the request with the earlier order id': {
    request: 'v2/bestellstatusAbfragen.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2', orderId: ORDER_ID },
  },
  'decodes an unknown id with a nil BestellSupportId and no sub-orders': {
    response: 'v2/bestellstatusAbfragen.response.unbekannt.xml',
    decodesTo: { id: ORDER_ID, status: 'KennungUnbekannt', supportId: null, subOrders: [] },
  },
  'decodes an available answer with the repeated sub-orders': {
    response: 'v2/bestellstatusAbfragen.response.verfuegbar.xml',
    expectedVersion: 2,
    decodesTo: {
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
  },
  'turns the server fault sample into a fault outcome': serverFaultSample,
});

describeRoundTrips(bestellstatusAbfragen, {
  request: orderStatusRequest,
  response: orderStatusResponse,
  numRuns: { request: 200, response: 150 },
  titles: {
    request: 'decodes every encoded request, whatever the bestellId text, to the same model',
    response: 'decodes every encoded answer to the same model',
  },
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

describeXsdValidity(bestellstatusAbfragen, {
  title: 'accepts 150 generated v%i requests and 150 answers, and rejects broken ones',
  request: orderStatusRequest,
  response: orderStatusResponse,
  cases: (_version, { responses }) => {
    const answer = responses[0]!;
    return {
      invalid: [
        answer.replace(/<m:BestellSupportId[^>]*?(\/>|>[^<]*<\/m:BestellSupportId>)/, ''),
        answer.replace(/Status="[A-Za-z]+"/, 'Status="Verfuegbar"'),
      ],
    };
  },
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

  itRefuses(bestellstatusAbfragen, {
    response: [
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
    ],
    request: [
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
        'bestellId: element in the wrong namespace: found <m:bestellId>',
      ],
      [
        'a bestellId with child elements',
        soapEnvelope(
          '<m:bestellstatusAbfragen><clientSoftwareKennung>W</clientSoftwareKennung><bestellId><x/></bestellId></m:bestellstatusAbfragen>',
        ),
        'bestellId: expected text, found child elements',
      ],
    ],
  });
});
