import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { documentRequest, documentResponse } from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  soapEnvelope,
  V1,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import { dokumentAbfragen, MAX_DOCUMENT_BYTES } from './dokument-abfragen.js';

const ID = '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e';
const response = (data: string) =>
  soapEnvelope(
    `<m:dokumentAbfragenResponse><return DokumentId="${ID}"><m:Data>${data}</m:Data></return></m:dokumentAbfragenResponse>`,
  );
const largestPdf = Buffer.alloc(MAX_DOCUMENT_BYTES, 0x25);
const oversized = Buffer.alloc(MAX_DOCUMENT_BYTES + 1, 0x25).toString('base64');

describe.skipIf(samplesUnavailableReason !== null)('dokumentAbfragen shared samples', () => {
  it('decodes the request sample', () => {
    expect(dokumentAbfragen.decodeRequest(readSample('v2/dokumentAbfragen.request.xml'))).toEqual({
      kind: 'ok',
      value: { version: 2, request: { clientSoftwareId: 'ExampleWawi 1.4.2', documentId: ID } },
    });
  });

  it('decodes the response sample to the PDF bytes', () => {
    expect(dokumentAbfragen.decodeResponse(readSample('v2/dokumentAbfragen.response.xml'))).toEqual({
      kind: 'ok',
      value: { document: { documentId: ID, data: Buffer.from('%PDF-1.4\n', 'latin1') } },
    });
  });
});

describe('dokumentAbfragen round trips (v2)', () => {
  it('decodes every encoded request to the same model', () => {
    fc.assert(
      fc.property(documentRequest, (request) => {
        expect(dokumentAbfragen.decodeRequest(dokumentAbfragen.encodeRequest(2, request))).toEqual({
          kind: 'ok',
          value: { version: 2, request },
        });
      }),
    );
  });

  it('decodes every encoded response to the same bytes', () => {
    fc.assert(
      fc.property(documentResponse, (r) => {
        expect(dokumentAbfragen.decodeResponse(dokumentAbfragen.encodeResponse(2, r), 2)).toEqual({
          kind: 'ok',
          value: r,
        });
      }),
    );
  });

  it('carries a document of exactly 2 MiB', () => {
    const decoded = dokumentAbfragen.decodeResponse(
      dokumentAbfragen.encodeResponse(2, { document: { documentId: ID, data: largestPdf } }),
    );
    expect(decoded.kind === 'ok' && decoded.value.document?.data.equals(largestPdf)).toBe(true);
  });
});

describe.skipIf(xsdUnavailableReason !== null)('dokumentAbfragen against the original XSD', () => {
  it('accepts 150 generated requests and responses and 2 MiB, refuses bad and oversized data', async () => {
    const requests = fc.sample(documentRequest, 150).map((r) => dokumentAbfragen.encodeRequest(2, r));
    const responses = fc.sample(documentResponse, 150).map((r) => dokumentAbfragen.encodeResponse(2, r));
    const largest = dokumentAbfragen.encodeResponse(2, { document: { documentId: ID, data: largestPdf } });
    const broken = [response('JVBERi0xLjR='), response(''), response(oversized)];
    await expectSchemaVerdicts(2, [...requests, ...responses, largest], broken);
  });
});

describe('dokumentAbfragen decoders refuse what the schema refuses', () => {
  it('accepts base64 wrapped over lines and with spaces, as xs:base64Binary allows', () => {
    const decoded = dokumentAbfragen.decodeResponse(response('JVBE\r\nRi0x\n LjQK\n'));
    expect(decoded).toEqual({
      kind: 'ok',
      value: { document: { documentId: ID, data: Buffer.from('%PDF-1.4\n') } },
    });
    expect(dokumentAbfragen.decodeResponse(response('JVBERi0xLg = =')).kind).toBe('ok');
  });

  it('refuses data that is not base64, empty or larger than 2 MiB', () => {
    expectInvalid(
      dokumentAbfragen.decodeResponse(response('JVBERi0xLjQ!')),
      "return/Data: not base64 (character '!'",
    );
    expectInvalid(
      dokumentAbfragen.decodeResponse(response('JVBERi0xLjQ')),
      'return/Data: not base64 (length',
    );
    expectInvalid(
      dokumentAbfragen.decodeResponse(response('JVBERi0xLjR=')),
      'return/Data: not base64 (non-canonical padding)',
    );
    expectInvalid(dokumentAbfragen.decodeResponse(response('JV==Ri0xLjQK')), 'return/Data: not base64');
    expectInvalid(dokumentAbfragen.decodeResponse(response('')), 'return/Data: empty');
    expectInvalid(
      dokumentAbfragen.decodeResponse(response(oversized)),
      `return/Data: ${MAX_DOCUMENT_BYTES + 1} bytes exceed`,
    );
  });

  it('refuses a missing Data element, a bad id and v1', () => {
    expectInvalid(
      dokumentAbfragen.decodeResponse(
        soapEnvelope(`<m:dokumentAbfragenResponse><return DokumentId="${ID}"/></m:dokumentAbfragenResponse>`),
      ),
      'return/Data: missing required element',
    );
    expectInvalid(
      dokumentAbfragen.decodeResponse(response('JVBERi0xLjQK').replace(ID, 'x')),
      'return/@DokumentId',
    );
    expectInvalid(
      dokumentAbfragen.decodeResponse(response('JVBERi0xLjQK').replace('urn:msv3:v2', V1)),
      'not part of MSV3 v1',
    );
    expectInvalid(
      dokumentAbfragen.decodeRequest(
        soapEnvelope('<m:dokumentAbfragen><dokumentAbfragenType DokumentId="x"/></m:dokumentAbfragen>'),
      ),
      'dokumentAbfragenType/@DokumentId',
    );
    expectInvalid(
      dokumentAbfragen.decodeRequest(
        soapEnvelope('<m:dokumentAbfragen><dokumentAbfragenType/></m:dokumentAbfragen>'),
      ),
      'dokumentAbfragenType/@DokumentId: missing required attribute',
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
