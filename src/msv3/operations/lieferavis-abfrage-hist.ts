import { decodePayload, type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import {
  assertEncodable,
  checkedPattern,
  checkNoContent,
  isBarcodeReferenz,
  lieferscheinnummerAttribute,
  optionalAttr,
  optionalAttribute,
  requireV2,
} from './extra-fields.js';
import {
  attribute,
  checkAttributes,
  checkVersion,
  expectAt,
  expectEnd,
  leafText,
  rethrowWithin,
  soapActionFor,
} from './fields.js';
import { type DeliveryNoticesResponse, readDeliveryNotices, writeDeliveryNotices } from './lieferavis.js';
import type { Msv3Operation } from './operation.js';

/**
 * lieferavisAbfrageHist (PROTOCOL.md §2.8, v2 only): one earlier notice by delivery-note number and/or
 * barcode. An unknown one is answered with the fault `LieferscheinOderBarcodeUnbekanntFault`.
 */

export type { DeliveryNoticesResponse } from './lieferavis.js';

export interface DeliveryNoticeHistoryRequest {
  /** `clientSoftwareKennung` (plain xs:string in the v2-only operations). */
  clientSoftwareId: string;
  /**
   * `lieferavisAbfrageHistAbfrage/@Lieferscheinnummer`. Both keys are optional in the schema; presumably
   * at least one is needed (not checked by the codec).
   */
  deliveryNoteNumber?: string;
  /** `lieferavisAbfrageHistAbfrage/@BarcodeReferenz`, the scanned barcode with its prefix. */
  barcodeReference?: string;
}

const NAME = 'lieferavisAbfrageHist';
const VERSIONS = [2] as const;
const NONE: readonly string[] = [];
const QUERY_ATTRIBUTES = ['Lieferscheinnummer', 'BarcodeReferenz'];

function encodeRequest(version: Msv3Version, request: DeliveryNoticeHistoryRequest): string {
  assertEncodable(NAME, VERSIONS, version);
  return wrapEnvelope(
    version,
    `<m:${NAME}><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>` +
      `<lieferavisAbfrageHistAbfrage${optionalAttr('Lieferscheinnummer', request.deliveryNoteNumber)}` +
      `${optionalAttr('BarcodeReferenz', request.barcodeReference)}/></m:${NAME}>`,
  );
}

function barcodeAttribute(el: XmlElement, name: string): string {
  return checkedPattern(attribute(el, name), `@${name}`, isBarcodeReferenz, 'a barcode reference');
}

function readRequest(wrapper: XmlElement, version: Msv3Version): DeliveryNoticeHistoryRequest {
  requireV2(NAME, version);
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = leafText(expectAt(c, 0, '', 'clientSoftwareKennung'), 'clientSoftwareKennung');
  const query = expectAt(c, 1, '', 'lieferavisAbfrageHistAbfrage');
  expectEnd(c, 2);
  try {
    checkAttributes(query, QUERY_ATTRIBUTES);
    checkNoContent(query);
    return {
      clientSoftwareId,
      deliveryNoteNumber: optionalAttribute(query, 'Lieferscheinnummer', lieferscheinnummerAttribute),
      barcodeReference: optionalAttribute(query, 'BarcodeReferenz', barcodeAttribute),
    };
  } catch (error) {
    return rethrowWithin('lieferavisAbfrageHistAbfrage', error);
  }
}

function encodeResponse(version: Msv3Version, response: DeliveryNoticesResponse): string {
  assertEncodable(NAME, VERSIONS, version);
  return wrapEnvelope(version, writeDeliveryNotices(`${NAME}Response`, response));
}

export const lieferavisAbfrageHist = {
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
} satisfies Msv3Operation<DeliveryNoticeHistoryRequest, DeliveryNoticesResponse>;
