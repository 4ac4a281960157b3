import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import {
  checkedPattern,
  checkNoContent,
  isBarcodeReferenz,
  lieferscheinnummerAttribute,
  optionalAttr,
  optionalAttribute,
  readV2Request,
} from './extra-fields.js';
import { attribute, checkAttributes } from './fields.js';
import { defineDeliveryNoticesQuery } from './lieferavis.js';
/**
 * lieferavisAbfrageHist (docs/msv3.md "Delivery history", v2 only): one earlier notice by delivery-note
 * number and/or barcode. An unknown one is answered with the fault `LieferscheinOderBarcodeUnbekanntFault`.
 */

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
const QUERY_ATTRIBUTES = ['Lieferscheinnummer', 'BarcodeReferenz'];

function encodeRequest(version: Msv3Version, request: DeliveryNoticeHistoryRequest): string {
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

/** `lieferavisAbfrageHistAbfrage`: attributes only. */
function readQuery(query: XmlElement): Omit<DeliveryNoticeHistoryRequest, 'clientSoftwareId'> {
  checkAttributes(query, QUERY_ATTRIBUTES);
  checkNoContent(query);
  return {
    deliveryNoteNumber: optionalAttribute(query, 'Lieferscheinnummer', lieferscheinnummerAttribute),
    barcodeReference: optionalAttribute(query, 'BarcodeReferenz', barcodeAttribute),
  };
}

function readRequest(wrapper: XmlElement): DeliveryNoticeHistoryRequest {
  return readV2Request(wrapper, 'lieferavisAbfrageHistAbfrage', readQuery);
}

export const lieferavisAbfrageHist = defineDeliveryNoticesQuery({
  name: 'lieferavisAbfrageHist',
  encodeRequest,
  readRequest,
});
