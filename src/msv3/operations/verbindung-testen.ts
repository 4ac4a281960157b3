import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import { readEmptyWrapper } from './extra-fields.js';
import { checkAttributes, expectEnd, readClientSoftwareId } from './fields.js';
import { defineOperation } from './operation.js';

/** verbindungTesten (docs/msv3.md "Connection test"): the credentials check; success is an empty answer. */

export interface ConnectionTestRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
}

/** The answer has no content: receiving it at all is the success. */
type ConnectionTestResponse = Record<string, never>;

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
  const clientSoftwareId = readClientSoftwareId(c);
  expectEnd(c, 1);
  return { clientSoftwareId };
}

function encodeResponse(version: Msv3Version, _response: ConnectionTestResponse): string {
  return wrapEnvelope(version, '<m:verbindungTestenResponse/>');
}

export const verbindungTesten = defineOperation({
  name: 'verbindungTesten',
  service: 'verbindungTesten',
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse: readEmptyWrapper,
});
