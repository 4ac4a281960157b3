import { decodePayload, type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import { assertEncodable, checkNoText, readLieferscheinnummer, requireV2, runOf } from './extra-fields.js';
import {
  checkAttributes,
  checkVersion,
  expectAt,
  expectEnd,
  leafText,
  rethrowWithin,
  soapActionFor,
} from './fields.js';
import type { Msv3Operation } from './operation.js';

/**
 * lieferavisBestaetigen (PROTOCOL.md §2.8, v2 only): acknowledge processed delivery notices so that
 * lieferavisAbfrageNeu stops returning them. Success is an empty answer.
 */

export const MAX_CONFIRMED_NOTES = 999;

export interface ConfirmDeliveryNoticesRequest {
  /** `clientSoftwareKennung` (plain xs:string in the v2-only operations). */
  clientSoftwareId: string;
  /** `lieferavisBestaetigenType/Lieferscheinnummer`, 1..999 delivery-note numbers. */
  deliveryNoteNumbers: string[];
}

/** The answer has no content. */
export type ConfirmDeliveryNoticesResponse = Record<string, never>;

const NAME = 'lieferavisBestaetigen';
const VERSIONS = [2] as const;
const NONE: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: ConfirmDeliveryNoticesRequest): string {
  assertEncodable(NAME, VERSIONS, version);
  let s = `<m:${NAME}><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung><lieferavisBestaetigenType>`;
  for (const n of request.deliveryNoteNumbers)
    s += `<m:Lieferscheinnummer>${escapeText(n)}</m:Lieferscheinnummer>`;
  return wrapEnvelope(version, `${s}</lieferavisBestaetigenType></m:${NAME}>`);
}

function readRequest(wrapper: XmlElement, version: Msv3Version): ConfirmDeliveryNoticesRequest {
  requireV2(NAME, version);
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = leafText(expectAt(c, 0, '', 'clientSoftwareKennung'), 'clientSoftwareKennung');
  const list = expectAt(c, 1, '', 'lieferavisBestaetigenType');
  expectEnd(c, 2);
  try {
    checkAttributes(list, NONE);
    checkNoText(list);
    const lc = list.children;
    const count = runOf(lc, 0, wrapper.ns, 'Lieferscheinnummer', 1, MAX_CONFIRMED_NOTES);
    expectEnd(lc, count);
    const deliveryNoteNumbers = lc
      .slice(0, count)
      .map((el, k) => readLieferscheinnummer(el, `Lieferscheinnummer[${k + 1}]`));
    return { clientSoftwareId, deliveryNoteNumbers };
  } catch (error) {
    return rethrowWithin('lieferavisBestaetigenType', error);
  }
}

function encodeResponse(version: Msv3Version, _response: ConfirmDeliveryNoticesResponse): string {
  assertEncodable(NAME, VERSIONS, version);
  return wrapEnvelope(version, `<m:${NAME}Response/>`);
}

function readResponse(wrapper: XmlElement, version: Msv3Version): ConfirmDeliveryNoticesResponse {
  requireV2(`${NAME}Response`, version);
  checkAttributes(wrapper, NONE);
  checkNoText(wrapper);
  expectEnd(wrapper.children, 0);
  return {};
}

export const lieferavisBestaetigen = {
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
  decodeResponse: (
    xml: string,
    expectedVersion?: Msv3Version,
  ): DecodeResult<ConfirmDeliveryNoticesResponse> =>
    decodePayload(xml, `${NAME}Response`, (el, version) => {
      checkVersion(version, expectedVersion);
      return readResponse(el, version);
    }),
} satisfies Msv3Operation<ConfirmDeliveryNoticesRequest, ConfirmDeliveryNoticesResponse>;
