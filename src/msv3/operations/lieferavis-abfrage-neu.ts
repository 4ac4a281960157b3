import { decodePayload, type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import { assertEncodable, requireV2 } from './extra-fields.js';
import { checkAttributes, checkVersion, expectAt, expectEnd, leafText, soapActionFor } from './fields.js';
import { type DeliveryNoticesResponse, readDeliveryNotices, writeDeliveryNotices } from './lieferavis.js';
import type { Msv3Operation } from './operation.js';

/** lieferavisAbfrageNeu (PROTOCOL.md §2.8, v2 only): the delivery notices not yet confirmed. */

export type { DeliveryNoticesResponse } from './lieferavis.js';

export interface NewDeliveryNoticesRequest {
  /** `clientSoftwareKennung` (plain xs:string in the v2-only operations). */
  clientSoftwareId: string;
}

const NAME = 'lieferavisAbfrageNeu';
const VERSIONS = [2] as const;
const NONE: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: NewDeliveryNoticesRequest): string {
  assertEncodable(NAME, VERSIONS, version);
  return wrapEnvelope(
    version,
    `<m:${NAME}><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung></m:${NAME}>`,
  );
}

function readRequest(wrapper: XmlElement, version: Msv3Version): NewDeliveryNoticesRequest {
  requireV2(NAME, version);
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = leafText(expectAt(c, 0, '', 'clientSoftwareKennung'), 'clientSoftwareKennung');
  expectEnd(c, 1);
  return { clientSoftwareId };
}

function encodeResponse(version: Msv3Version, response: DeliveryNoticesResponse): string {
  assertEncodable(NAME, VERSIONS, version);
  return wrapEnvelope(version, writeDeliveryNotices(`${NAME}Response`, response));
}

export const lieferavisAbfrageNeu = {
  name: NAME,
  service: 'lieferavis',
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
  decodeResponse: (xml: string, expectedVersion?: Msv3Version): DecodeResult<DeliveryNoticesResponse> =>
    decodePayload(xml, `${NAME}Response`, (el, version) => {
      checkVersion(version, expectedVersion);
      requireV2(`${NAME}Response`, version);
      return readDeliveryNotices(el);
    }),
} satisfies Msv3Operation<NewDeliveryNoticesRequest, DeliveryNoticesResponse>;
