import { closePlainEnvelope, type Msv3Version, openPlainEnvelope, wrapEnvelope } from '../envelope.js';
import { LIEFERVORGABEN, type Liefervorgabe, type Msv3FaultInfo, type Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import { PlainShape, plainProlog, plainTags, tryPlain } from '../xml/plain.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  MAX_POSITIONS,
  MAX_SUB_ORDERS,
  PLAIN_SUB_ORDER_NAMES,
  type PositionAnswer,
  readPlainSubOrderAnswers,
  readSubOrderAnswers,
  readSubOrderHeader,
  type SubOrderAnswer,
  type SubOrderHeader,
  writeSubOrderAnswers,
  writeSubOrderHeader,
} from './bestellung-antwort.js';
import {
  booleanAttribute,
  booleanValue,
  checkAttributes,
  checkCount,
  countRun,
  decodingContext,
  expectAt,
  expectEnd,
  fail,
  intAttribute,
  intValue,
  isUuid,
  pznToWireText,
  readEnum,
  readInt,
  readPzn,
  requestParts,
  responseReturn,
  rethrowWithin,
  SUPPORT_ID_MAX,
  uuidAttribute,
  type WireContext,
  wireContext,
} from './fields.js';
import { defineOperation, type OperationCodec } from './operation.js';

/** bestellen (docs/msv3.md "Orders"): place an order of one or more sub-orders. */

export type { PositionAnswer, SubOrderAnswer } from './bestellung-antwort.js';

/** At most 1000 positions across all sub-orders of one order (XSD annotation; decoders enforce it). */
const MAX_ORDER_POSITIONS = 1000;

export interface OrderPosition {
  pzn: Pzn;
  /** `Menge`, 1..9999 (v1) / 1..99999 (v2). */
  quantity: number;
  /** `Liefervorgabe`. */
  deliveryInstruction: Liefervorgabe;
}

/** One requested sub-order (BestellungAuftrag); a PZN at most once per sub-order (not checked). */
export interface SubOrder extends SubOrderHeader {
  /** 1..1000 positions. */
  positions: OrderPosition[];
}

export interface OrderRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /** `bestellung/@Id`: persist it, bestellstatusAbfragen asks by it. */
  id: string;
  /** `@BestellSupportId`, 1..999999. */
  supportId: number;
  /** `Auftraege`, 1..1000. */
  subOrders: SubOrder[];
}

export interface OrderResponse {
  /** `return/@Id` (= the request's Id). */
  id: string;
  /** `@BestellSupportId`. */
  supportId: number;
  /** `@NachtBetrieb`: accepted in night mode, no sub-orders; fetch the result with bestellstatusAbfragen. */
  nightMode: boolean;
  /** 0..1000 answered sub-orders, in any order: match them with `matchOrderAnswer`. */
  subOrders: SubOrderAnswer[];
}

const BESTELLUNG_ATTRIBUTES = ['Id', 'BestellSupportId'];
const RETURN_ATTRIBUTES = ['Id', 'BestellSupportId', 'NachtBetrieb'];
const NO_ATTRIBUTES: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: OrderRequest): string {
  let s = `<m:bestellen><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>`;
  s += `<bestellung Id="${escapeAttr(request.id)}" BestellSupportId="${request.supportId}">`;
  for (const sub of request.subOrders) {
    s += writeSubOrderHeader(sub);
    for (const p of sub.positions) {
      s += `<m:Positionen><m:Pzn>${pznToWireText(p.pzn)}</m:Pzn><m:Menge>${p.quantity}</m:Menge><m:Liefervorgabe>${p.deliveryInstruction}</m:Liefervorgabe></m:Positionen>`;
    }
    s += '</m:Auftraege>';
  }
  return wrapEnvelope(version, `${s}</bestellung></m:bestellen>`);
}

function readPosition(el: XmlElement, ctx: WireContext): OrderPosition {
  if (el.attrs !== null) checkAttributes(el, NO_ATTRIBUTES);
  const c = el.children;
  const pzn = readPzn(expectAt(c, 0, ctx.ns, 'Pzn'), 'Pzn');
  const quantity = readInt(expectAt(c, 1, ctx.ns, 'Menge'), 'Menge', 1, ctx.maxQuantity);
  const deliveryInstruction = readEnum(
    expectAt(c, 2, ctx.ns, 'Liefervorgabe'),
    'Liefervorgabe',
    LIEFERVORGABEN,
  );
  expectEnd(c, 3);
  return { pzn, quantity, deliveryInstruction };
}

function readSubOrder(el: XmlElement, ctx: WireContext): SubOrder {
  const header = readSubOrderHeader(el);
  const c = el.children;
  const count = countRun(c, 0, ctx.ns, 'Positionen');
  checkCount('Positionen', count, 1, MAX_POSITIONS);
  expectEnd(c, count);
  const positions: OrderPosition[] = [];
  for (let k = 0; k < count; k++) {
    try {
      positions.push(readPosition(c[k]!, ctx));
    } catch (error) {
      rethrowWithin(`Positionen[${k + 1}]`, error);
    }
  }
  return { ...header, positions };
}

function readRequest(wrapper: XmlElement, version: Msv3Version): OrderRequest {
  const ctx = decodingContext(wrapper, version);
  const { clientSoftwareId, payload } = requestParts(wrapper, 'bestellung');
  try {
    checkAttributes(payload, BESTELLUNG_ATTRIBUTES);
    const id = uuidAttribute(payload, 'Id');
    const supportId = intAttribute(payload, 'BestellSupportId', 1, SUPPORT_ID_MAX);
    const c = payload.children;
    const count = countRun(c, 0, ctx.ns, 'Auftraege');
    checkCount('Auftraege', count, 1, MAX_SUB_ORDERS);
    expectEnd(c, count);
    const subOrders: SubOrder[] = [];
    let total = 0;
    for (let k = 0; k < count; k++) {
      try {
        const sub = readSubOrder(c[k]!, ctx);
        total += sub.positions.length;
        subOrders.push(sub);
      } catch (error) {
        rethrowWithin(`Auftraege[${k + 1}]`, error);
      }
    }
    if (total > MAX_ORDER_POSITIONS)
      fail('Auftraege', `${total} positions in all, at most ${MAX_ORDER_POSITIONS}`);
    return { clientSoftwareId, id, supportId, subOrders };
  } catch (error) {
    return rethrowWithin('bestellung', error);
  }
}

function encodeResponse(version: Msv3Version, response: OrderResponse): string {
  const ctx = wireContext(version);
  const open =
    `<m:bestellenResponse><return Id="${escapeAttr(response.id)}" BestellSupportId="${response.supportId}" ` +
    `NachtBetrieb="${response.nightMode}"`;
  const payload =
    response.subOrders.length === 0
      ? `${open}/></m:bestellenResponse>`
      : `${open}>${writeSubOrderAnswers(response.subOrders, ctx)}</return></m:bestellenResponse>`;
  return wrapEnvelope(version, payload);
}

function readResponse(wrapper: XmlElement, version: Msv3Version): OrderResponse {
  const ret = responseReturn(wrapper);
  try {
    checkAttributes(ret, RETURN_ATTRIBUTES);
    return {
      id: uuidAttribute(ret, 'Id'),
      supportId: intAttribute(ret, 'BestellSupportId', 1, SUPPORT_ID_MAX),
      nightMode: booleanAttribute(ret, 'NachtBetrieb'),
      subOrders: readSubOrderAnswers(ret.children, 0, decodingContext(wrapper, version)),
    };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

/** `readResponse` for the answer in its plain form (xml/plain.ts); undefined leaves it to readResponse. */
function readResponsePlain(xml: string, expectedVersion: Msv3Version | undefined): OrderResponse | undefined {
  return tryPlain(() => {
    const shape = plainProlog(xml);
    const head = openPlainEnvelope(shape, 'bestellenResponse');
    if (expectedVersion !== undefined && head.version !== expectedVersion) PlainShape.giveUp();
    const ret = shape.startTag();
    const a = ret.attrs;
    if (ret.qname !== 'return' || ret.declares !== null || a === null || a.length !== 6) PlainShape.giveUp();
    let id: string | undefined;
    let supportId: string | undefined;
    let nightMode: string | undefined;
    for (let k = 0; k < 6; k += 2) {
      if (a[k] === 'Id') id = a[k + 1];
      else if (a[k] === 'BestellSupportId') supportId = a[k + 1];
      else if (a[k] === 'NachtBetrieb') nightMode = a[k + 1];
    }
    if (id === undefined || supportId === undefined || nightMode === undefined || !isUuid(id))
      PlainShape.giveUp();
    const response: OrderResponse = {
      id,
      supportId: intValue(supportId, '@BestellSupportId', 1, SUPPORT_ID_MAX),
      nightMode: booleanValue(nightMode, '@NachtBetrieb'),
      subOrders: [],
    };
    if (!ret.selfClosing) {
      const t = plainTags('bestellen', PLAIN_SUB_ORDER_NAMES, head.prefix, head.xsiPrefix);
      const ctx = wireContext(head.version);
      response.subOrders = readPlainSubOrderAnswers(shape, t, ctx, `${head.prefix}:Auftraege`);
      shape.expect('</return>');
    }
    closePlainEnvelope(shape, head);
    return response;
  });
}

/** The codec of `bestellen` (exported so that tests can run it without the fast path). */
export const bestellenCodec: OperationCodec<OrderRequest, OrderResponse> = {
  name: 'bestellen',
  service: 'bestellen',
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
  readResponsePlain,
};

export const bestellen = defineOperation(bestellenCodec);

// ---------------------------------------------------------------------------------------------------
// Matching answers to requests (docs/msv3.md "Order answers"): by sub-order Id and BestellPzn, never by index.

interface MatchedPosition {
  subOrderId: string;
  requested: OrderPosition;
  answered: PositionAnswer;
}

export interface OrderAnswerMatch {
  /** Every requested position that has an answer, in request order. */
  matched: MatchedPosition[];
  /** Requested positions without an answer (their sub-order was answered without them, or not at all). */
  unanswered: { subOrderId: string; position: OrderPosition }[];
  /** Requested sub-orders rejected in-band with `Auftragsfehler`; their positions are not listed as unanswered. */
  rejected: { subOrder: SubOrder; error: Msv3FaultInfo }[];
  /** Requested sub-orders missing from the answer altogether (e.g. night mode); positions are in `unanswered`. */
  missingSubOrders: SubOrder[];
  /** Answered sub-orders whose Id was not requested, or that repeat an Id already answered. */
  unexpectedSubOrders: SubOrderAnswer[];
  /** Answered positions of a requested sub-order whose PZN was not requested there (or was answered twice). */
  unexpectedPositions: { subOrderId: string; position: PositionAnswer }[];
}

/**
 * Pairs each requested position with its answer by sub-order `Id` and `BestellPzn`. Answers may come in
 * any order. PZNs are compared in their 8-digit model form. A PZN requested twice in one sub-order
 * (which MSV3 forbids) is paired in order of appearance.
 */
export function matchOrderAnswer(
  request: Pick<OrderRequest, 'subOrders'>,
  answer: Pick<OrderResponse, 'subOrders'>,
): OrderAnswerMatch {
  const result: OrderAnswerMatch = {
    matched: [],
    unanswered: [],
    rejected: [],
    missingSubOrders: [],
    unexpectedSubOrders: [],
    unexpectedPositions: [],
  };
  const requestedById = new Map<string, SubOrder>();
  for (const sub of request.subOrders) requestedById.set(sub.id, sub);
  const answerById = new Map<string, SubOrderAnswer>();
  for (const a of answer.subOrders) {
    if (!requestedById.has(a.id) || answerById.has(a.id)) result.unexpectedSubOrders.push(a);
    else answerById.set(a.id, a);
  }

  for (const sub of request.subOrders) {
    const a = answerById.get(sub.id);
    if (a === undefined) {
      result.missingSubOrders.push(sub);
      for (const position of sub.positions) result.unanswered.push({ subOrderId: sub.id, position });
      continue;
    }
    if (a.error !== undefined) result.rejected.push({ subOrder: sub, error: a.error });

    const answersByPzn = new Map<Pzn, PositionAnswer[]>();
    for (const p of a.positions) {
      const list = answersByPzn.get(p.pzn);
      if (list === undefined) answersByPzn.set(p.pzn, [p]);
      else list.push(p);
    }
    for (const position of sub.positions) {
      const answered = answersByPzn.get(position.pzn)?.shift();
      if (answered !== undefined) result.matched.push({ subOrderId: sub.id, requested: position, answered });
      else if (a.error === undefined) result.unanswered.push({ subOrderId: sub.id, position });
    }
    for (const left of answersByPzn.values()) {
      for (const position of left) result.unexpectedPositions.push({ subOrderId: sub.id, position });
    }
  }
  return result;
}
