import { decodePayload, type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import {
  assertEncodable,
  checkNoText,
  optionalRequestParts,
  optionalReturn,
  requireV2,
  writeOptionalClientSoftwareId,
} from './extra-fields.js';
import { checkAttributes, checkVersion, rethrowWithin, soapActionFor } from './fields.js';
import type { Msv3Operation } from './operation.js';
import {
  type AssessedReturnPosition,
  type ReturnHeader,
  type ReturnPosition,
  readAssessedPosition,
  readHeader,
  readPosition,
  readPositions,
  writeHeader,
  writePosition,
} from './retourenavis.js';

/**
 * retourenavisAnfragen (PROTOCOL.md §2.9, v2 only): a non-binding return enquiry; the wholesaler gives a
 * verdict per position. Both wrapper children and the answer are optional in the schema.
 */

export type {
  AssessedReturnPosition,
  RetoureGrund,
  RetourenAnteilTyp,
  ReturnPosition,
} from './retourenavis.js';

/** `retourenavisAnfrageType`. */
export interface ReturnEnquiry extends ReturnHeader {
  /** `Position`, 1..999. */
  positions: ReturnPosition[];
}

export interface ReturnEnquiryRequest {
  /** `clientSoftwareKennung`, optional here. */
  clientSoftwareId?: string;
  /** `retourenavisAnfrageType`, optional in the schema (a request without it asks nothing). */
  enquiry?: ReturnEnquiry;
}

/** `return` (RetourenavisAnfrageAntwort). */
export interface ReturnEnquiryAnswer extends ReturnHeader {
  /** `Position`, 1..999, each with its verdict; the order may differ from the request's. */
  positions: AssessedReturnPosition[];
}

export interface ReturnEnquiryResponse {
  /** `return`, optional in the schema. */
  answer?: ReturnEnquiryAnswer;
}

const NAME = 'retourenavisAnfragen';
const VERSIONS = [2] as const;
const HEADER_ATTRIBUTES = ['ID', 'RetoureSupportID'];

function encodeRequest(version: Msv3Version, request: ReturnEnquiryRequest): string {
  assertEncodable(NAME, VERSIONS, version);
  let s = `<m:${NAME}>${writeOptionalClientSoftwareId(request.clientSoftwareId)}`;
  const e = request.enquiry;
  if (e !== undefined) {
    s += `<retourenavisAnfrageType ${writeHeader(e)}>`;
    for (const p of e.positions) s += writePosition(p);
    s += '</retourenavisAnfrageType>';
  }
  return wrapEnvelope(version, `${s}</m:${NAME}>`);
}

function readEnquiry(el: XmlElement, ns: string): ReturnEnquiry {
  checkAttributes(el, HEADER_ATTRIBUTES);
  checkNoText(el);
  return { ...readHeader(el), positions: readPositions(el, ns, readPosition) };
}

function readRequest(wrapper: XmlElement, version: Msv3Version): ReturnEnquiryRequest {
  requireV2(NAME, version);
  const { clientSoftwareId, payload } = optionalRequestParts(wrapper, 'retourenavisAnfrageType');
  if (payload === undefined) return { clientSoftwareId };
  try {
    return { clientSoftwareId, enquiry: readEnquiry(payload, wrapper.ns) };
  } catch (error) {
    return rethrowWithin('retourenavisAnfrageType', error);
  }
}

function encodeResponse(version: Msv3Version, response: ReturnEnquiryResponse): string {
  assertEncodable(NAME, VERSIONS, version);
  const a = response.answer;
  if (a === undefined) return wrapEnvelope(version, `<m:${NAME}Response/>`);
  let s = `<m:${NAME}Response><return ${writeHeader(a)}>`;
  for (const p of a.positions) s += writePosition(p, p.verdict);
  return wrapEnvelope(version, `${s}</return></m:${NAME}Response>`);
}

function readResponse(wrapper: XmlElement, version: Msv3Version): ReturnEnquiryResponse {
  requireV2(`${NAME}Response`, version);
  const ret = optionalReturn(wrapper);
  if (ret === undefined) return {};
  try {
    checkAttributes(ret, HEADER_ATTRIBUTES);
    checkNoText(ret);
    return {
      answer: { ...readHeader(ret), positions: readPositions(ret, wrapper.ns, readAssessedPosition) },
    };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

export const retourenavisAnfragen = {
  name: NAME,
  service: 'retourenavis',
  versions: VERSIONS,
  soapAction: (version: Msv3Version) => {
    assertEncodable(NAME, VERSIONS, version);
    return soapActionFor(version, NAME);
  },
  encodeRequest,
  decodeRequest: (xml: string) =>
    decodePayload(xml, NAME, (el, version) => ({ version, request: readRequest(el, version) })),
  encodeResponse,
  /** `expectedVersion`, when given, turns an answer in the other version into `invalid`. */
  decodeResponse: (xml: string, expectedVersion?: Msv3Version): DecodeResult<ReturnEnquiryResponse> =>
    decodePayload(xml, `${NAME}Response`, (el, version) => {
      checkVersion(version, expectedVersion);
      return readResponse(el, version);
    }),
} satisfies Msv3Operation<ReturnEnquiryRequest, ReturnEnquiryResponse>;
