import { decodePayload, type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr } from '../xml/write.js';
import {
  assertEncodable,
  checkNoContent,
  checkNoText,
  optionalRequestParts,
  optionalReturn,
  requireV2,
  writeOptionalClientSoftwareId,
} from './extra-fields.js';
import {
  checkAttributes,
  checkVersion,
  expectAt,
  expectEnd,
  fail,
  leafText,
  rethrowWithin,
  soapActionFor,
  uuidAttribute,
} from './fields.js';
import type { Msv3Operation } from './operation.js';

/**
 * dokumentAbfragen (PROTOCOL.md §2.10, v2 only): a PDF (delivery note or return slip) by the id from
 * `Lieferavis/DokumentId` or `RetourenAnteil/@DokumentID`. `Data` is base64 on the wire, 1 byte..2 MiB.
 */

export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

export interface DocumentRequest {
  /** `clientSoftwareKennung`, optional here. */
  clientSoftwareId?: string;
  /** `dokumentAbfragenType/@DokumentId`; undefined when the optional `dokumentAbfragenType` is absent. */
  documentId?: string;
}

export interface Document {
  /** `@DokumentId`. */
  documentId: string;
  /** `Data`, decoded: 1 byte..2 MiB (a PDF, though MSV3 does not check that). */
  data: Buffer;
}

export interface DocumentResponse {
  /** `return`, optional in the schema. */
  document?: Document;
}

const NAME = 'dokumentAbfragen';
const VERSIONS = [2] as const;
const ID_ONLY = ['DokumentId'];

function encodeRequest(version: Msv3Version, request: DocumentRequest): string {
  assertEncodable(NAME, VERSIONS, version);
  const query =
    request.documentId === undefined
      ? ''
      : `<dokumentAbfragenType DokumentId="${escapeAttr(request.documentId)}"/>`;
  return wrapEnvelope(
    version,
    `<m:${NAME}>${writeOptionalClientSoftwareId(request.clientSoftwareId)}${query}</m:${NAME}>`,
  );
}

function readRequest(wrapper: XmlElement, version: Msv3Version): DocumentRequest {
  requireV2(NAME, version);
  const { clientSoftwareId, payload } = optionalRequestParts(wrapper, 'dokumentAbfragenType');
  if (payload === undefined) return { clientSoftwareId };
  try {
    checkAttributes(payload, ID_ONLY);
    checkNoContent(payload);
    return { clientSoftwareId, documentId: uuidAttribute(payload, 'DokumentId') };
  } catch (error) {
    return rethrowWithin('dokumentAbfragenType', error);
  }
}

/** @throws RangeError when the document is empty or larger than 2 MiB (the schema's limits). */
function encodeResponse(version: Msv3Version, response: DocumentResponse): string {
  assertEncodable(NAME, VERSIONS, version);
  const d = response.document;
  if (d === undefined) return wrapEnvelope(version, `<m:${NAME}Response/>`);
  if (d.data.length < 1 || d.data.length > MAX_DOCUMENT_BYTES) {
    throw new RangeError(`a document must have 1..${MAX_DOCUMENT_BYTES} bytes, got ${d.data.length}`);
  }
  return wrapEnvelope(
    version,
    `<m:${NAME}Response><return DokumentId="${escapeAttr(d.documentId)}"><m:Data>${d.data.toString('base64')}</m:Data></return></m:${NAME}Response>`,
  );
}

const B64_ALPHABET = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')
  B64_ALPHABET[c.charCodeAt(0)] = 1;
// With padding, the last data character may only carry bits that end up in a whole byte (XSD B16 / B04).
const BEFORE_ONE_PAD = 'AEIMQUYcgkosw048';
const BEFORE_TWO_PADS = 'AQgw';

/**
 * Strict xs:base64Binary: whitespace anywhere is allowed (the type collapses it), otherwise only the
 * alphabet in groups of four, with canonical padding. Checked by hand, in one pass, so a 2.8 MB value
 * cannot make a regular expression backtrack.
 */
export function decodeBase64(raw: string, path: string): Buffer {
  const clean = /[ \t\r\n]/.test(raw) ? raw.replace(/[ \t\r\n]+/g, '') : raw;
  const len = clean.length;
  if (len === 0) fail(path, 'empty (at least 1 byte is required)');
  if (len % 4 !== 0) fail(path, 'not base64 (length is not a multiple of 4)');
  const pads = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  const dataEnd = len - pads;
  for (let i = 0; i < dataEnd; i++) {
    const c = clean.charCodeAt(i);
    if (c >= 128 || B64_ALPHABET[c] !== 1)
      fail(path, `not base64 (character '${clean.charAt(i)}' at ${i + 1})`);
  }
  if (pads > 0 && !(pads === 1 ? BEFORE_ONE_PAD : BEFORE_TWO_PADS).includes(clean.charAt(dataEnd - 1))) {
    fail(path, 'not base64 (non-canonical padding)');
  }
  const bytes = (len / 4) * 3 - pads;
  if (bytes > MAX_DOCUMENT_BYTES) fail(path, `${bytes} bytes exceed the limit of ${MAX_DOCUMENT_BYTES}`);
  return Buffer.from(clean, 'base64');
}

function readDocument(ret: XmlElement, ns: string): Document {
  checkAttributes(ret, ID_ONLY);
  checkNoText(ret);
  const documentId = uuidAttribute(ret, 'DokumentId');
  const c = ret.children;
  const data = decodeBase64(leafText(expectAt(c, 0, ns, 'Data'), 'Data'), 'Data');
  expectEnd(c, 1);
  return { documentId, data };
}

function readResponse(wrapper: XmlElement, version: Msv3Version): DocumentResponse {
  requireV2(`${NAME}Response`, version);
  const ret = optionalReturn(wrapper);
  if (ret === undefined) return {};
  try {
    return { document: readDocument(ret, wrapper.ns) };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

export const dokumentAbfragen = {
  name: NAME,
  service: 'dokumentAbfragen',
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
  decodeResponse: (xml: string, expectedVersion?: Msv3Version): DecodeResult<DocumentResponse> =>
    decodePayload(xml, `${NAME}Response`, (el, version) => {
      checkVersion(version, expectedVersion);
      return readResponse(el, version);
    }),
} satisfies Msv3Operation<DocumentRequest, DocumentResponse>;
