import {
  AUFTRAGSARTEN,
  type Auftragsart,
  LIEFERVORGABEN,
  type Liefervorgabe,
  type Msv3FaultInfo,
  type Pzn,
} from '../model.js';
import type { ParsedTag, XmlElement } from '../xml/parse.js';
import { PlainShape, type PlainTags, patternsPerTable, plainPattern, tagIndex } from '../xml/plain.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  itemPatterns,
  type OrderPart,
  PLAIN_PART_NAMES,
  readParts,
  readPlainItem,
  readSubstitution,
  type Substitution,
  writePart,
  writeSubstitution,
} from './anteile.js';
import {
  checkAttributes,
  checkCount,
  countRun,
  enumAttribute,
  enumValue,
  expectAt,
  expectEnd,
  intAttribute,
  intValue,
  isAt,
  isDruckbareKennung,
  isUuid,
  kennungAttribute,
  pznToWireText,
  pznValue,
  readEnum,
  readInt,
  readPzn,
  readString,
  rethrowWithin,
  SUPPORT_ID_MAX,
  uuidAttribute,
  type WireContext,
} from './fields.js';

/**
 * The answered sub-orders (BestellungAntwortAuftrag) shared by bestellen and bestellstatusAbfragen,
 * and the sub-order attributes shared with the request's BestellungAuftrag.
 */

export const MAX_SUB_ORDERS = 1000;
export const MAX_POSITIONS = 1000;

/** The attributes of a sub-order (`Auftraege`), in the request and in the answer. */
export interface SubOrderHeader {
  /** `@Id`, a fresh uuid per sub-order; answers are matched to requests by it. */
  id: string;
  /** `@Auftragsart`. */
  orderType: Auftragsart;
  /** `@Auftragskennung`, a printable id; the wholesaler may replace it in the answer. */
  orderLabel: string;
  /** `@GebindeId`, printable id; mandatory for VERSAND, forbidden otherwise (not checked by the codec). */
  containerId?: string;
  /** `@AuftragsSupportID`, 1..999999. */
  supportId: number;
}

/** One answered order line (BestellungAntwortPosition). */
export interface PositionAnswer {
  /** `BestellPzn`: the ordered PZN (match requests by it, never by index). */
  pzn: Pzn;
  /** `BestellMenge`. */
  quantity: number;
  /** `BestellLiefervorgabe`. */
  deliveryInstruction: Liefervorgabe;
  substitution?: Substitution;
  /** `Anteile`, 1..9. */
  parts: OrderPart[];
}

/** One answered sub-order (BestellungAntwortAuftrag): positions, or an in-band `Auftragsfehler`. */
export interface SubOrderAnswer extends SubOrderHeader {
  /** 0..1000 positions (none when `error` is set). */
  positions: PositionAnswer[];
  /** `Auftragsfehler`: the whole sub-order was rejected. */
  error?: Msv3FaultInfo;
}

const SUB_ORDER_ATTRIBUTES = ['Id', 'Auftragsart', 'Auftragskennung', 'GebindeId', 'AuftragsSupportID'];
const NO_ATTRIBUTES: readonly string[] = [];

export function readSubOrderHeader(el: XmlElement): SubOrderHeader {
  checkAttributes(el, SUB_ORDER_ATTRIBUTES);
  const containerId = el.attr('GebindeId') === undefined ? undefined : kennungAttribute(el, 'GebindeId');
  return {
    id: uuidAttribute(el, 'Id'),
    orderType: enumAttribute(el, 'Auftragsart', AUFTRAGSARTEN),
    orderLabel: kennungAttribute(el, 'Auftragskennung'),
    containerId,
    supportId: intAttribute(el, 'AuftragsSupportID', 1, SUPPORT_ID_MAX),
  };
}

export function writeSubOrderHeader(h: SubOrderHeader): string {
  const gebinde = h.containerId === undefined ? '' : ` GebindeId="${escapeAttr(h.containerId)}"`;
  return (
    `<m:Auftraege Id="${escapeAttr(h.id)}" Auftragsart="${h.orderType}" ` +
    `Auftragskennung="${escapeAttr(h.orderLabel)}"${gebinde} AuftragsSupportID="${h.supportId}">`
  );
}

function readPosition(el: XmlElement, ctx: WireContext): PositionAnswer {
  if (el.attrs !== null) checkAttributes(el, NO_ATTRIBUTES);
  const ns = ctx.ns;
  const c = el.children;
  const pzn = readPzn(expectAt(c, 0, ns, 'BestellPzn'), 'BestellPzn');
  const quantity = readInt(expectAt(c, 1, ns, 'BestellMenge'), 'BestellMenge', 1, ctx.maxQuantity);
  const deliveryInstruction = readEnum(
    expectAt(c, 2, ns, 'BestellLiefervorgabe'),
    'BestellLiefervorgabe',
    LIEFERVORGABEN,
  );
  let i = 3;
  let substitution: Substitution | undefined;
  if (isAt(c, i, ns, 'Substitution')) substitution = readSubstitution(c[i++]!, ctx, true);
  const parts = readParts(c, i, ctx, true, 9);
  expectEnd(c, i + parts.length);
  return { pzn, quantity, deliveryInstruction, substitution, parts };
}

function readFaultInfo(el: XmlElement, ctx: WireContext): Msv3FaultInfo {
  if (el.attrs !== null) checkAttributes(el, NO_ATTRIBUTES);
  const c = el.children;
  const errorCode = readString(expectAt(c, 0, ctx.ns, 'ErrorCode'), 'ErrorCode', 1, 5);
  const userText = readString(
    expectAt(c, 1, ctx.ns, 'EndanwenderFehlertext'),
    'EndanwenderFehlertext',
    1,
    1024,
  );
  const technicalText = readString(
    expectAt(c, 2, ctx.ns, 'TechnischerFehlertext'),
    'TechnischerFehlertext',
    1,
    1024,
  );
  expectEnd(c, 3);
  return { errorCode, userText, technicalText };
}

function readSubOrderAnswer(el: XmlElement, ctx: WireContext): SubOrderAnswer {
  const header = readSubOrderHeader(el);
  const c = el.children;
  const count = countRun(c, 0, ctx.ns, 'Positionen');
  checkCount('Positionen', count, 0, MAX_POSITIONS);
  const positions: PositionAnswer[] = [];
  for (let k = 0; k < count; k++) {
    try {
      positions.push(readPosition(c[k]!, ctx));
    } catch (error) {
      rethrowWithin(`Positionen[${k + 1}]`, error);
    }
  }
  let error: Msv3FaultInfo | undefined;
  let i = count;
  if (isAt(c, i, ctx.ns, 'Auftragsfehler')) {
    try {
      error = readFaultInfo(c[i++]!, ctx);
    } catch (failure) {
      rethrowWithin('Auftragsfehler', failure);
    }
  }
  expectEnd(c, i);
  return {
    id: header.id,
    orderType: header.orderType,
    orderLabel: header.orderLabel,
    containerId: header.containerId,
    supportId: header.supportId,
    positions,
    error,
  };
}

/** Reads the run of answered `Auftraege` (0..1000) starting at child `i`. */
export function readSubOrderAnswers(children: XmlElement[], i: number, ctx: WireContext): SubOrderAnswer[] {
  const count = countRun(children, i, ctx.ns, 'Auftraege');
  checkCount('Auftraege', count, 0, MAX_SUB_ORDERS);
  expectEnd(children, i + count);
  const answers: SubOrderAnswer[] = [];
  for (let k = 0; k < count; k++) {
    try {
      answers.push(readSubOrderAnswer(children[i + k]!, ctx));
    } catch (error) {
      rethrowWithin(`Auftraege[${k + 1}]`, error);
    }
  }
  return answers;
}

// ---------------------------------------------------------------------------------------------------
// Fast path (xml/plain.ts): answered sub-orders in their plain form, without Auftragsfehler.

/** The names of `readPlainSubOrderAnswers`; its `PlainTags` must be made from a list beginning with them. */
export const PLAIN_SUB_ORDER_NAMES = [
  ...PLAIN_PART_NAMES,
  'Auftraege',
  'Positionen',
  'BestellPzn',
  'BestellMenge',
  'BestellLiefervorgabe',
];

const AUFTRAEGE = tagIndex(PLAIN_SUB_ORDER_NAMES, 'Auftraege');
const POSITIONEN = tagIndex(PLAIN_SUB_ORDER_NAMES, 'Positionen');
const BESTELL_PZN = tagIndex(PLAIN_SUB_ORDER_NAMES, 'BestellPzn');
const BESTELL_MENGE = tagIndex(PLAIN_SUB_ORDER_NAMES, 'BestellMenge');
const BESTELL_LIEFERVORGABE = tagIndex(PLAIN_SUB_ORDER_NAMES, 'BestellLiefervorgabe');

/** `readSubOrderHeader` for a start tag read by `PlainShape.startTag`: only the attributes it allows. */
function readPlainSubOrderHeader(tag: ParsedTag): SubOrderHeader {
  const a = tag.attrs;
  if (a === null || tag.declares !== null) PlainShape.giveUp();
  let id: string | undefined;
  let orderType: string | undefined;
  let orderLabel: string | undefined;
  let containerId: string | undefined;
  let supportId: string | undefined;
  for (let k = 0; k < a.length; k += 2) {
    const value = a[k + 1]!;
    switch (a[k]) {
      case 'Id':
        id = value;
        break;
      case 'Auftragsart':
        orderType = value;
        break;
      case 'Auftragskennung':
        orderLabel = value;
        break;
      case 'GebindeId':
        containerId = value;
        break;
      case 'AuftragsSupportID':
        supportId = value;
        break;
      default:
        PlainShape.giveUp();
    }
  }
  if (id === undefined || orderType === undefined || orderLabel === undefined || supportId === undefined)
    PlainShape.giveUp();
  if (!isUuid(id) || !isDruckbareKennung(orderLabel)) PlainShape.giveUp();
  if (containerId !== undefined && !isDruckbareKennung(containerId)) PlainShape.giveUp();
  return {
    id,
    orderType: enumValue(orderType, AUFTRAGSARTEN, '@Auftragsart'),
    orderLabel,
    containerId,
    supportId: intValue(supportId, '@AuftragsSupportID', 1, SUPPORT_ID_MAX),
  };
}

/** A position's patterns (`itemPatterns`): its three leaves come before its substitution and parts. */
const positionPatterns = patternsPerTable((t) =>
  itemPatterns(
    t,
    t[POSITIONEN]!,
    [
      plainPattern.leaf(t[BESTELL_PZN]!, t[BESTELL_PZN + 1]!),
      plainPattern.leaf(t[BESTELL_MENGE]!, t[BESTELL_MENGE + 1]!),
      plainPattern.leaf(t[BESTELL_LIEFERVORGABE]!, t[BESTELL_LIEFERVORGABE + 1]!),
    ],
    t[POSITIONEN + 1]!,
    true,
  ),
);

/** The next position, or undefined when no position comes next. */
function readPlainPosition(shape: PlainShape, t: PlainTags, ctx: WireContext): PositionAnswer | undefined {
  const item = readPlainItem(shape, t, positionPatterns(t), ctx, true, 9);
  if (item === undefined) return undefined;
  return {
    pzn: pznValue(item.head[1]!, 'BestellPzn'),
    quantity: intValue(item.head[2]!, 'BestellMenge', 1, ctx.maxQuantity),
    deliveryInstruction: enumValue(item.head[3]!, LIEFERVORGABEN, 'BestellLiefervorgabe'),
    substitution: item.substitution,
    parts: item.parts,
  };
}

/**
 * `readSubOrderAnswers` for the plain form: the run of answered `Auftraege` next (with attributes, so
 * `qname` is the start tag's name, `<p:Auftraege`), each without `Auftragsfehler` (which gives up).
 */
export function readPlainSubOrderAnswers(
  shape: PlainShape,
  t: PlainTags,
  ctx: WireContext,
  qname: string,
): SubOrderAnswer[] {
  const answers: SubOrderAnswer[] = [];
  const open = `<${qname}`;
  while (shape.nextIs(open)) {
    const tag = shape.startTag();
    if (tag.qname !== qname || answers.length === MAX_SUB_ORDERS) PlainShape.giveUp();
    const header = readPlainSubOrderHeader(tag);
    const positions: PositionAnswer[] = [];
    if (!tag.selfClosing) {
      for (let position = readPlainPosition(shape, t, ctx); position !== undefined; ) {
        if (positions.length === MAX_POSITIONS) PlainShape.giveUp();
        positions.push(position);
        position = readPlainPosition(shape, t, ctx);
      }
      shape.expect(t[AUFTRAEGE + 1]!);
    }
    answers.push({
      id: header.id,
      orderType: header.orderType,
      orderLabel: header.orderLabel,
      containerId: header.containerId,
      supportId: header.supportId,
      positions,
      error: undefined,
    });
  }
  return answers;
}

function writeFaultInfo(local: string, f: Msv3FaultInfo): string {
  return (
    `<m:${local}><m:ErrorCode>${escapeText(f.errorCode)}</m:ErrorCode>` +
    `<m:EndanwenderFehlertext>${escapeText(f.userText)}</m:EndanwenderFehlertext>` +
    `<m:TechnischerFehlertext>${escapeText(f.technicalText)}</m:TechnischerFehlertext></m:${local}>`
  );
}

export function writeSubOrderAnswers(answers: readonly SubOrderAnswer[], ctx: WireContext): string {
  let s = '';
  for (const a of answers) {
    s += writeSubOrderHeader(a);
    for (const p of a.positions) {
      s +=
        `<m:Positionen><m:BestellPzn>${pznToWireText(p.pzn)}</m:BestellPzn><m:BestellMenge>${p.quantity}</m:BestellMenge>` +
        `<m:BestellLiefervorgabe>${p.deliveryInstruction}</m:BestellLiefervorgabe>`;
      if (p.substitution !== undefined) s += writeSubstitution(p.substitution, ctx);
      for (const part of p.parts) s += writePart(part, ctx, true);
      s += '</m:Positionen>';
    }
    if (a.error !== undefined) s += writeFaultInfo('Auftragsfehler', a.error);
    s += '</m:Auftraege>';
  }
  return s;
}
