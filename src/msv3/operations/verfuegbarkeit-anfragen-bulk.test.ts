import { describe, expect, it } from 'vitest';
import { bulkAvailabilityRequest, bulkAvailabilityResponse } from '../test-support/arbitraries/ordering.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  itRefuses,
  serverFaultSample,
  soapEnvelope,
} from '../test-support/codec-test-kit.js';
import { verfuegbarkeitAnfragenBulk } from './verfuegbarkeit-anfragen-bulk.js';

const ID = '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d';

describeSamples(verfuegbarkeitAnfragenBulk, {
  'decodes the request with an explicit PZN list': {
    request: 'v2/verfuegbarkeitAnfragenBulk.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      id: ID,
      query: { kind: 'list', pzns: ['04114918', '01234567', '07654321'] },
    },
  },
  'decodes the answer listing only the available PZNs': {
    response: 'v2/verfuegbarkeitAnfragenBulk.response.xml',
    decodesTo: { id: ID, availablePzns: ['04114918', '07654321'] },
  },
  'turns the server fault sample into a fault outcome': serverFaultSample,
});

describeRoundTrips(verfuegbarkeitAnfragenBulk, {
  request: bulkAvailabilityRequest,
  response: bulkAvailabilityResponse,
  numRuns: 150,
  titles: {
    request: 'decodes every encoded request (list or block) to the same model',
    response: 'decodes every encoded answer, including an empty one, to the same model',
  },
});

describe('verfuegbarkeitAnfragenBulk encoders', () => {
  it('write a block as one PznBlock without leading zeros', () => {
    const xml = verfuegbarkeitAnfragenBulk.encodeRequest(2, {
      clientSoftwareId: 'W',
      id: ID,
      query: { kind: 'block', firstPzn: '04100000' },
    });
    expect(xml).toContain(
      `<verfuegbarkeitsanfrageBulk Id="${ID}"><m:PznBlock>4100000</m:PznBlock></verfuegbarkeitsanfrageBulk>`,
    );
  });

  it('name the soapAction after version and operation', () => {
    expect(verfuegbarkeitAnfragenBulk.soapAction(2)).toBe('urn:msv3:v2:Msv3:verfuegbarkeitAnfragenBulk');
  });
});

describeXsdValidity(verfuegbarkeitAnfragenBulk, {
  title: 'accepts 120 generated v%i requests and answers at and below 10 000 PZNs',
  samples: 120,
  request: bulkAvailabilityRequest,
  response: bulkAvailabilityResponse,
  cases: (version) => {
    const many = Array.from({ length: 10_000 }, (_, i) => String(1_000_000 + i * 7).padStart(8, '0'));
    const list = (pzns: string[]) =>
      verfuegbarkeitAnfragenBulk.encodeRequest(version, {
        clientSoftwareId: 'W',
        id: ID,
        query: { kind: 'list', pzns },
      });
    return {
      valid: [
        list(many),
        verfuegbarkeitAnfragenBulk.encodeResponse(version, { id: ID, availablePzns: many }),
      ],
      invalid: [
        list([]),
        verfuegbarkeitAnfragenBulk.encodeResponse(version, { id: ID, availablePzns: [...many, '00000001'] }),
      ],
    };
  },
});

describe('verfuegbarkeitAnfragenBulk decoders refuse what the schema refuses', () => {
  const request = (inner: string) =>
    soapEnvelope(
      `<m:verfuegbarkeitAnfragenBulk><clientSoftwareKennung>W</clientSoftwareKennung><verfuegbarkeitsanfrageBulk Id="${ID}">${inner}</verfuegbarkeitsanfrageBulk></m:verfuegbarkeitAnfragenBulk>`,
    );
  const response = (inner: string, attrs = `Id="${ID}"`) =>
    soapEnvelope(
      `<m:verfuegbarkeitAnfragenBulkResponse><return ${attrs}>${inner}</return></m:verfuegbarkeitAnfragenBulkResponse>`,
    );

  it('accepts the hand-written envelopes the refusals are variations of', () => {
    expect(verfuegbarkeitAnfragenBulk.decodeRequest(request('<m:PznBlock>4100000</m:PznBlock>')).kind).toBe(
      'ok',
    );
    expect(verfuegbarkeitAnfragenBulk.decodeResponse(response('')).kind).toBe('ok');
  });

  itRefuses(verfuegbarkeitAnfragenBulk, {
    request: [
      ['no PZN at all', request(''), 'verfuegbarkeitsanfrageBulk/Pzn: missing required element'],
      [
        'both a list and a block',
        request('<m:PznBlock>4100000</m:PznBlock><m:Pzn>1</m:Pzn>'),
        'verfuegbarkeitsanfrageBulk/Pzn: unexpected element',
      ],
      [
        'two blocks',
        request('<m:PznBlock>1</m:PznBlock><m:PznBlock>2</m:PznBlock>'),
        'PznBlock: unexpected element',
      ],
      [
        '10 001 PZNs',
        request('<m:Pzn>1</m:Pzn>'.repeat(10_001)),
        'Pzn: 10001 elements, at most 10000 allowed',
      ],
      ['a negative PZN', request('<m:Pzn>-5</m:Pzn>'), "Pzn[1]: '-5' is not a PZN"],
      ['a PZN of 19 digits', request(`<m:Pzn>${'9'.repeat(19)}</m:Pzn>`), 'Pzn[1]: '],
      [
        'a wrong wrapper',
        soapEnvelope('<m:verfuegbarkeitAnfragen/>'),
        'expected <verfuegbarkeitAnfragenBulk>',
      ],
    ],
    response: [
      ['a missing Id', response('', ''), 'return/@Id: missing required attribute'],
      ['10 001 PZNs', response('<m:Pzn>1</m:Pzn>'.repeat(10_001)), 'return/Pzn: 10001 elements'],
      ['an empty PZN', response('<m:Pzn></m:Pzn>'), "return/Pzn[1]: '' is not a PZN"],
      ['a PznBlock', response('<m:PznBlock>1</m:PznBlock>'), 'return/PznBlock: unexpected element'],
    ],
  });
});
