import { decodePayload, type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import { checkNoText } from './extra-fields.js';
import { checkAttributes, checkVersion, expectAt, expectEnd, readString, soapActionFor } from './fields.js';
import type { Msv3Operation } from './operation.js';

/** verbindungTesten (PROTOCOL.md §2.1): the credentials check; success is an empty answer. */

export interface ConnectionTestRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
}

/** The answer has no content: receiving it at all is the success. */
export type ConnectionTestResponse = Record<string, never>;

const NONE: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: ConnectionTestRequest): string {
  return wrapEnvelope(
    version,
    `<m:verbindungTesten><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung></m:verbindungTesten>`,
  );
}

function readRequest(wrapper: XmlElement): ConnectionTestRequest {
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = readString(
    expectAt(c, 0, '', 'clientSoftwareKennung'),
    'clientSoftwareKennung',
    1,
    80,
  );
  expectEnd(c, 1);
  return { clientSoftwareId };
}

function encodeResponse(version: Msv3Version, _response: ConnectionTestResponse): string {
  return wrapEnvelope(version, '<m:verbindungTestenResponse/>');
}

function readResponse(wrapper: XmlElement): ConnectionTestResponse {
  checkAttributes(wrapper, NONE);
  checkNoText(wrapper);
  expectEnd(wrapper.children, 0);
  return {};
}

export const verbindungTesten = {
  name: 'verbindungTesten',
  service: 'verbindungTesten',
  versions: [1, 2],
  soapAction: (version: Msv3Version) => soapActionFor(version, 'verbindungTesten'),
  encodeRequest,
  decodeRequest: (xml: string) =>
    decodePayload(xml, 'verbindungTesten', (el, version) => ({ version, request: readRequest(el) })),
  encodeResponse,
  /** `expectedVersion`, when given, turns an answer in the other version into `invalid`. */
  decodeResponse: (xml: string, expectedVersion?: Msv3Version): DecodeResult<ConnectionTestResponse> =>
    decodePayload(xml, 'verbindungTestenResponse', (el, version) => {
      checkVersion(version, expectedVersion);
      return readResponse(el);
    }),
} satisfies Msv3Operation<ConnectionTestRequest, ConnectionTestResponse>;
