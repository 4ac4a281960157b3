import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import { readSubOrderAnswers, type SubOrderAnswer, writeSubOrderAnswers } from './bestellung-antwort.js';
import {
  checkAttributes,
  decodingContext,
  enumAttribute,
  expectAt,
  expectEnd,
  leafText,
  readClientSoftwareId,
  readNillableInt,
  responseReturn,
  rethrowWithin,
  SUPPORT_ID_MAX,
  soapActionFor,
  uuidAttribute,
  wireContext,
} from './fields.js';
import { defineOperation } from './operation.js';

/** bestellstatusAbfragen (PROTOCOL.md §2.5): fetch the answer of an earlier order (e.g. after night mode). */

export type { SubOrderAnswer } from './bestellung-antwort.js';

export const BESTELLSTATUS_WERTE = [
  'KennungUnbekannt',
  'BestellantwortNichtVerfuegbar',
  'BestellantwortVerfuegbar',
] as const;
export type Bestellstatus = (typeof BESTELLSTATUS_WERTE)[number];

export interface OrderStatusRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /** `bestellId`: the `bestellung/@Id` of the earlier bestellen call (typed xs:string, kept verbatim). */
  orderId: string;
}

export interface OrderStatusResponse {
  /** `return/@Id`: the queried order id. */
  id: string;
  /** `@Status`. */
  status: Bestellstatus;
  /** `BestellSupportId`, nillable (`null` e.g. for an unknown id). */
  supportId: number | null;
  /** The sub-orders of the original answer, only with `BestellantwortVerfuegbar`. */
  subOrders: SubOrderAnswer[];
}

const RETURN_ATTRIBUTES = ['Id', 'Status'];

function encodeRequest(version: Msv3Version, request: OrderStatusRequest): string {
  return wrapEnvelope(
    version,
    `<m:bestellstatusAbfragen><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>` +
      `<bestellId>${escapeText(request.orderId)}</bestellId></m:bestellstatusAbfragen>`,
  );
}

function readRequest(wrapper: XmlElement): OrderStatusRequest {
  if (wrapper.attrs !== null) checkAttributes(wrapper, []);
  const c = wrapper.children;
  const clientSoftwareId = readClientSoftwareId(c);
  const orderId = leafText(expectAt(c, 1, '', 'bestellId'), 'bestellId');
  expectEnd(c, 2);
  return { clientSoftwareId, orderId };
}

function encodeResponse(version: Msv3Version, response: OrderStatusResponse): string {
  const supportId =
    response.supportId === null
      ? '<m:BestellSupportId xsi:nil="true"/>'
      : `<m:BestellSupportId>${response.supportId}</m:BestellSupportId>`;
  return wrapEnvelope(
    version,
    `<m:bestellstatusAbfragenResponse><return Id="${escapeAttr(response.id)}" Status="${response.status}">` +
      `${supportId}${writeSubOrderAnswers(response.subOrders, wireContext(version))}</return></m:bestellstatusAbfragenResponse>`,
  );
}

function readResponse(wrapper: XmlElement, version: Msv3Version): OrderStatusResponse {
  const ctx = decodingContext(wrapper, version);
  const ret = responseReturn(wrapper);
  try {
    checkAttributes(ret, RETURN_ATTRIBUTES);
    const id = uuidAttribute(ret, 'Id');
    const status = enumAttribute(ret, 'Status', BESTELLSTATUS_WERTE);
    const c = ret.children;
    const supportId = readNillableInt(
      expectAt(c, 0, ctx.ns, 'BestellSupportId'),
      'BestellSupportId',
      1,
      SUPPORT_ID_MAX,
    );
    return { id, status, supportId, subOrders: readSubOrderAnswers(c, 1, ctx) };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

export const bestellstatusAbfragen = defineOperation({
  name: 'bestellstatusAbfragen',
  service: 'bestellstatusAbfragen',
  /** v2's WSDL says `bestellantwortAbfragen` (sic, PROTOCOL.md §1.3). */
  soapAction: (version) =>
    soapActionFor(version, version === 2 ? 'bestellantwortAbfragen' : 'bestellstatusAbfragen'),
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
});
