import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import {
  checkNoText,
  readEmptyWrapper,
  readLieferscheinnummer,
  readV2Request,
  runOf,
} from './extra-fields.js';
import { checkAttributes, expectEnd } from './fields.js';
import { defineOperation } from './operation.js';

/**
 * lieferavisBestaetigen (docs/msv3.md "Delivery notices", v2 only): acknowledge processed delivery notices so that
 * lieferavisAbfrageNeu stops returning them. Success is an empty answer.
 */

const MAX_CONFIRMED_NOTES = 999;

export interface ConfirmDeliveryNoticesRequest {
  /** `clientSoftwareKennung` (plain xs:string in the v2-only operations). */
  clientSoftwareId: string;
  /** `lieferavisBestaetigenType/Lieferscheinnummer`, 1..999 delivery-note numbers. */
  deliveryNoteNumbers: string[];
}

/** The answer has no content. */
type ConfirmDeliveryNoticesResponse = Record<string, never>;

const NAME = 'lieferavisBestaetigen';
const NONE: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: ConfirmDeliveryNoticesRequest): string {
  let s = `<m:${NAME}><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung><lieferavisBestaetigenType>`;
  for (const n of request.deliveryNoteNumbers)
    s += `<m:Lieferscheinnummer>${escapeText(n)}</m:Lieferscheinnummer>`;
  return wrapEnvelope(version, `${s}</lieferavisBestaetigenType></m:${NAME}>`);
}

/** `lieferavisBestaetigenType`: 1..999 `Lieferscheinnummer`. */
function readNumbers(list: XmlElement, ns: string): Omit<ConfirmDeliveryNoticesRequest, 'clientSoftwareId'> {
  checkAttributes(list, NONE);
  checkNoText(list);
  const lc = list.children;
  const count = runOf(lc, 0, ns, 'Lieferscheinnummer', 1, MAX_CONFIRMED_NOTES);
  expectEnd(lc, count);
  const deliveryNoteNumbers = lc
    .slice(0, count)
    .map((el, k) => readLieferscheinnummer(el, `Lieferscheinnummer[${k + 1}]`));
  return { deliveryNoteNumbers };
}

function readRequest(wrapper: XmlElement): ConfirmDeliveryNoticesRequest {
  return readV2Request(wrapper, 'lieferavisBestaetigenType', readNumbers);
}

function encodeResponse(version: Msv3Version, _response: ConfirmDeliveryNoticesResponse): string {
  return wrapEnvelope(version, `<m:${NAME}Response/>`);
}

export const lieferavisBestaetigen = defineOperation({
  name: 'lieferavisBestaetigen',
  service: 'lieferavis',
  v2Only: true,
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse: readEmptyWrapper,
});
