import { closePlainEnvelope, type Msv3Version, openPlainEnvelope, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { PlainShape, plainProlog, plainTags, tagIndex, tryPlain } from '../xml/plain.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  PLAIN_SUB_ORDER_NAMES,
  readPlainSubOrderAnswers,
  readSubOrderAnswers,
  type SubOrderAnswer,
  writeSubOrderAnswers,
} from './bestellung-antwort.js';
import {
  checkAttributes,
  decodingContext,
  enumAttribute,
  enumValue,
  expectAt,
  expectEnd,
  intAt,
  isUuid,
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
import { defineOperation, type OperationCodec } from './operation.js';
/**
 * bestellstatusAbfragen (docs/msv3.md "Order status"): fetch the answer of an earlier order (e.g. after night
 * mode).
 */

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

const PLAIN_NAMES = [...PLAIN_SUB_ORDER_NAMES, 'BestellSupportId'];
const BESTELL_SUPPORT_ID = tagIndex(PLAIN_NAMES, 'BestellSupportId');

/** `readResponse` for the answer in its plain form (xml/plain.ts); undefined leaves it to readResponse. */
function readResponsePlain(
  xml: string,
  expectedVersion: Msv3Version | undefined,
): OrderStatusResponse | undefined {
  return tryPlain(() => {
    const shape = plainProlog(xml);
    const head = openPlainEnvelope(shape, 'bestellstatusAbfragenResponse');
    if (expectedVersion !== undefined && head.version !== expectedVersion) PlainShape.giveUp();
    const ret = shape.startTag();
    const a = ret.attrs;
    if (ret.qname !== 'return' || ret.selfClosing || ret.declares !== null || a === null || a.length !== 4)
      PlainShape.giveUp();
    const idAt = a[0] === 'Id' ? 1 : 3;
    const statusAt = a[0] === 'Status' ? 1 : 3;
    if (a[idAt - 1] !== 'Id' || a[statusAt - 1] !== 'Status' || !isUuid(a[idAt]!)) PlainShape.giveUp();
    const id = a[idAt]!;
    const status = enumValue(a[statusAt]!, BESTELLSTATUS_WERTE, '@Status');
    const t = plainTags('bestellstatusAbfragen', PLAIN_NAMES, head.prefix, head.xsiPrefix);
    const ctx = wireContext(head.version);
    const supportId = shape.nillableLeaf(
      t[BESTELL_SUPPORT_ID]!,
      t[BESTELL_SUPPORT_ID + 1]!,
      t[BESTELL_SUPPORT_ID + 2]!,
    )
      ? intAt(shape.src, shape.textStart, shape.textEnd, 'BestellSupportId', 1, SUPPORT_ID_MAX)
      : null;
    const subOrders = readPlainSubOrderAnswers(shape, t, ctx, `${head.prefix}:Auftraege`);
    shape.expect('</return>');
    closePlainEnvelope(shape, head);
    return { id, status, supportId, subOrders };
  });
}

/** The codec of `bestellstatusAbfragen` (exported so that tests can run it without the fast path). */
export const bestellstatusAbfragenCodec: OperationCodec<OrderStatusRequest, OrderStatusResponse> = {
  name: 'bestellstatusAbfragen',
  service: 'bestellstatusAbfragen',
  /** v2's WSDL says `bestellantwortAbfragen` (sic, docs/msv3.md "Envelope"). */
  soapAction: (version) =>
    soapActionFor(version, version === 2 ? 'bestellantwortAbfragen' : 'bestellstatusAbfragen'),
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
  readResponsePlain,
};

export const bestellstatusAbfragen = defineOperation(bestellstatusAbfragenCodec);
