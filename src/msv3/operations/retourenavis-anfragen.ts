import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { readOptionalRequest, writeOptionalClientSoftwareId } from './extra-fields.js';
import {
  type AssessedReturnPosition,
  defineReturnOperation,
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
 * retourenavisAnfragen (docs/msv3.md "Returns", v2 only): a non-binding return enquiry; the wholesaler gives a
 * verdict per position. Both wrapper children and the answer are optional in the schema.
 */

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
interface ReturnEnquiryAnswer extends ReturnHeader {
  /** `Position`, 1..999, each with its verdict; the order may differ from the request's. */
  positions: AssessedReturnPosition[];
}

export interface ReturnEnquiryResponse {
  /** `return`, optional in the schema. */
  answer?: ReturnEnquiryAnswer;
}

const NAME = 'retourenavisAnfragen';

function encodeRequest(version: Msv3Version, request: ReturnEnquiryRequest): string {
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
  return { ...readHeader(el), positions: readPositions(el, ns, readPosition) };
}

function readRequest(wrapper: XmlElement): ReturnEnquiryRequest {
  return readOptionalRequest(wrapper, 'retourenavisAnfrageType', 'enquiry', readEnquiry);
}

function writeAssessedPositions(a: ReturnEnquiryAnswer): string {
  let s = '';
  for (const p of a.positions) s += writePosition(p, p.verdict);
  return s;
}

function readAnswer(ret: XmlElement, ns: string): ReturnEnquiryAnswer {
  return { ...readHeader(ret), positions: readPositions(ret, ns, readAssessedPosition) };
}

export const retourenavisAnfragen = defineReturnOperation({
  name: NAME,
  encodeRequest,
  readRequest,
  writeAnswer: writeAssessedPositions,
  readAnswer,
});
