import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr } from '../xml/write.js';
import {
  checkNoContent,
  checkNoText,
  readOptionalRequest,
  readOptionalReturn,
  writeOptionalClientSoftwareId,
} from './extra-fields.js';
import { checkAttributes, expectAt, expectEnd, fail, leafText, uuidAttribute } from './fields.js';
import { defineOperation } from './operation.js';

/**
 * dokumentAbfragen (docs/msv3.md "Documents", v2 only): a PDF (delivery note or return slip) by the id from
 * `Lieferavis/DokumentId` or `RetourenAnteil/@DokumentID`. `Data` is base64 on the wire, 1 byte..2 MiB.
 */

export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

export interface DocumentRequest {
  /** `clientSoftwareKennung`, optional here. */
  clientSoftwareId?: string;
  /** `dokumentAbfragenType/@DokumentId`; undefined when the optional `dokumentAbfragenType` is absent. */
  documentId?: string;
}

interface Document {
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
const ID_ONLY = ['DokumentId'];

function encodeRequest(version: Msv3Version, request: DocumentRequest): string {
  const query =
    request.documentId === undefined
      ? ''
      : `<dokumentAbfragenType DokumentId="${escapeAttr(request.documentId)}"/>`;
  return wrapEnvelope(
    version,
    `<m:${NAME}>${writeOptionalClientSoftwareId(request.clientSoftwareId)}${query}</m:${NAME}>`,
  );
}

/** `dokumentAbfragenType`: the `@DokumentId` only. */
function readQuery(query: XmlElement): string {
  checkAttributes(query, ID_ONLY);
  checkNoContent(query);
  return uuidAttribute(query, 'DokumentId');
}

function readRequest(wrapper: XmlElement): DocumentRequest {
  return readOptionalRequest(wrapper, 'dokumentAbfragenType', 'documentId', readQuery);
}

/** @throws RangeError when the document is empty or larger than 2 MiB (the schema's limits). */
function encodeResponse(version: Msv3Version, response: DocumentResponse): string {
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
function decodeBase64(raw: string, path: string): Buffer {
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

function readResponse(wrapper: XmlElement): DocumentResponse {
  return readOptionalReturn(wrapper, 'document', readDocument);
}

export const dokumentAbfragen = defineOperation({
  name: 'dokumentAbfragen',
  service: 'dokumentAbfragen',
  v2Only: true,
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
});
