import { describe, expect, it } from 'vitest';
import { documentRequest, documentResponse } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectRefusedInputs,
  expectRefusedVariations,
  soapEnvelope,
  V1,
} from '../test-support/codec-test-kit.js';
import { dokumentAbfragen, MAX_DOCUMENT_BYTES } from './dokument-abfragen.js';

const ID = '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e';
const response = (data: string) =>
  soapEnvelope(
    `<m:dokumentAbfragenResponse><return DokumentId="${ID}"><m:Data>${data}</m:Data></return></m:dokumentAbfragenResponse>`,
  );
const largestPdf = Buffer.alloc(MAX_DOCUMENT_BYTES, 0x25);
const oversized = Buffer.alloc(MAX_DOCUMENT_BYTES + 1, 0x25).toString('base64');

describeSamples(dokumentAbfragen, {
  'decodes the request sample': {
    request: 'v2/dokumentAbfragen.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2', documentId: ID },
  },
  'decodes the response sample to the PDF bytes': {
    response: 'v2/dokumentAbfragen.response.xml',
    decodesTo: { document: { documentId: ID, data: Buffer.from('%PDF-1.4\n', 'latin1') } },
  },
});

describeRoundTrips(dokumentAbfragen, {
  request: documentRequest,
  response: documentResponse,
  titles: { response: 'decodes every encoded response to the same bytes' },
  more: () => {
    it('carries a document of exactly 2 MiB', () => {
      const decoded = dokumentAbfragen.decodeResponse(
        dokumentAbfragen.encodeResponse(2, { document: { documentId: ID, data: largestPdf } }),
      );
      expect(decoded.kind === 'ok' && decoded.value.document?.data.equals(largestPdf)).toBe(true);
    });
  },
});

describeXsdValidity(dokumentAbfragen, {
  title: 'accepts 150 generated requests and responses and 2 MiB, refuses bad and oversized data',
  request: documentRequest,
  response: documentResponse,
  cases: () => ({
    valid: [dokumentAbfragen.encodeResponse(2, { document: { documentId: ID, data: largestPdf } })],
    invalid: [response('JVBERi0xLjR='), response(''), response(oversized)],
  }),
});

describe('dokumentAbfragen decoders refuse what the schema refuses', () => {
  const decodeRequest = (xml: string) => dokumentAbfragen.decodeRequest(xml);
  const decodeResponse = (xml: string) => dokumentAbfragen.decodeResponse(xml);

  it('accepts base64 wrapped over lines and with spaces, as xs:base64Binary allows', () => {
    const decoded = dokumentAbfragen.decodeResponse(response('JVBE\r\nRi0x\n LjQK\n'));
    expect(decoded).toEqual({
      kind: 'ok',
      value: { document: { documentId: ID, data: Buffer.from('%PDF-1.4\n') } },
    });
    expect(dokumentAbfragen.decodeResponse(response('JVBERi0xLg = =')).kind).toBe('ok');
  });

  it('refuses data that is not base64, empty or larger than 2 MiB', () => {
    expectRefusedInputs(decodeResponse, response, [
      ['JVBERi0xLjQ!', "return/Data: not base64 (character '!'"],
      ['JVBERi0xLjQ', 'return/Data: not base64 (length'],
      ['JVBERi0xLjR=', 'return/Data: not base64 (non-canonical padding)'],
      ['JV==Ri0xLjQK', 'return/Data: not base64'],
      ['', 'return/Data: empty'],
      [oversized, `return/Data: ${MAX_DOCUMENT_BYTES + 1} bytes exceed`],
    ]);
  });

  it('refuses a missing Data element, a bad id and v1', () => {
    expectRefusedVariations(decodeResponse, response('JVBERi0xLjQK'), [
      ['><m:Data>JVBERi0xLjQK</m:Data></return>', '/>', 'return/Data: missing required element'],
      [ID, 'x', 'return/@DokumentId'],
      ['urn:msv3:v2', V1, 'not part of MSV3 v1'],
    ]);
    expectRefusedInputs(
      decodeRequest,
      (query) => soapEnvelope(`<m:dokumentAbfragen>${query}</m:dokumentAbfragen>`),
      [
        ['<dokumentAbfragenType DokumentId="x"/>', 'dokumentAbfragenType/@DokumentId'],
        ['<dokumentAbfragenType/>', 'dokumentAbfragenType/@DokumentId: missing required attribute'],
      ],
    );
  });

  it('accepts the request without its optional children', () => {
    expect(dokumentAbfragen.decodeRequest(soapEnvelope('<m:dokumentAbfragen/>'))).toEqual({
      kind: 'ok',
      value: { version: 2, request: {} },
    });
  });

  it('refuses to encode an empty or oversized document', () => {
    expect(() =>
      dokumentAbfragen.encodeResponse(2, { document: { documentId: ID, data: Buffer.alloc(0) } }),
    ).toThrow(RangeError);
    expect(() =>
      dokumentAbfragen.encodeResponse(2, {
        document: { documentId: ID, data: Buffer.alloc(MAX_DOCUMENT_BYTES + 1) },
      }),
    ).toThrow(RangeError);
  });
});
