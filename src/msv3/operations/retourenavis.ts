import { wrapEnvelope } from '../envelope.js';
import type { Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr } from '../xml/write.js';
import {
  checkNoContent,
  checkNoText,
  dateAttribute,
  lieferscheinnummerAttribute,
  optionalAttr,
  optionalAttribute,
  pznAttribute,
  readEach,
  readOptionalReturn,
  runOf,
  stringAttribute,
} from './extra-fields.js';
import {
  checkAttributes,
  enumAttribute,
  expectEnd,
  intAttribute,
  pznToWireText,
  SUPPORT_ID_MAX,
  uuidAttribute,
} from './fields.js';
import { defineOperation, type Msv3Operation, type OperationCodec } from './operation.js';

/**
 * Structures shared by retourenavisAnfragen and retourenavisAnkuendigen (docs/msv3.md "Returns"): the return
 * position (`RetourePositionType`, attributes only), the verdicts and the optional wrapper children of the
 * v2-only services. PosRefID uniqueness is an annotation rule, left to the caller.
 */

export const RETOURE_GRUENDE = [
  'Bestellfehler',
  'BerechnetNichtGeliefert',
  'Beschaedigt',
  'VerfallZuKurz',
  'ZuvielGeliefert',
] as const;
/** `RetoureGrund`: why the pharmacy returns the goods. */
export type RetoureGrund = (typeof RETOURE_GRUENDE)[number];

export const RETOUREN_ANTEIL_TYPEN = [
  'RetoureAkzeptiert',
  'RetoureAkzeptiertRueckspracheNoetig',
  'RetoureAkzeptiertKeineRuecksendungNoetig',
  'LieferscheinnummerUnbekannt',
  'PznInLieferscheinnummerNichtEnthalten',
  'KeineRuecknahme',
  'RueckgabefristUeberschritten',
  'MengeUeberschritten',
] as const;
/** `RetourenAnteilTypType`: the wholesaler's verdict (three accepted, five refused values). */
export type RetourenAnteilTyp = (typeof RETOUREN_ANTEIL_TYPEN)[number];

const MAX_RETURN_POSITIONS = 999;
const MAX_POSITION_REF = 999;
const MAX_RETURN_QUANTITY = 9999;

/** `Position` (RetourePositionType). */
export interface ReturnPosition {
  /** `@PosRefID`, 1..999, unique within one request; answers refer to positions by it. */
  positionRef: number;
  /** `@Lieferscheinnummer` of the original delivery. */
  deliveryNoteNumber: string;
  /** `@PZN` (may repeat across positions). */
  pzn: Pzn;
  /** `@RetourenMenge`, 1..9999. */
  quantity: number;
  /** `@Retouregrund`. */
  reason: RetoureGrund;
  /** `@Charge`, 0–50 characters. */
  batch?: string;
  /** `@Verfalldatum`, xs:date as written. */
  expiryDate?: string;
}

/** A position of the enquiry answer, with the wholesaler's verdict. */
export interface AssessedReturnPosition extends ReturnPosition {
  /** `@RetourenAnteilTyp`. */
  verdict: RetourenAnteilTyp;
}

/** The attributes shared by the enquiry and the announcement (and echoed by their answers). */
export interface ReturnHeader {
  /** `@ID`, a fresh uuid chosen by the pharmacy. */
  id: string;
  /** `@RetoureSupportID`, 1..999999. */
  supportId: number;
}

const POSITION_ATTRIBUTES = [
  'PosRefID',
  'Lieferscheinnummer',
  'PZN',
  'RetourenMenge',
  'Retouregrund',
  'Charge',
  'Verfalldatum',
];
/** The attributes of the enquiry, the announcement and their answers' `return`. */
export const HEADER_ATTRIBUTES: readonly string[] = ['ID', 'RetoureSupportID'];
const ASSESSED_POSITION_ATTRIBUTES = [...POSITION_ATTRIBUTES, 'RetourenAnteilTyp'];
const batch = stringAttribute(0, 50);

export function writePosition(p: ReturnPosition, verdict?: RetourenAnteilTyp): string {
  return (
    `<m:Position PosRefID="${p.positionRef}" Lieferscheinnummer="${escapeAttr(p.deliveryNoteNumber)}"` +
    ` PZN="${pznToWireText(p.pzn)}" RetourenMenge="${p.quantity}" Retouregrund="${p.reason}"` +
    `${optionalAttr('Charge', p.batch)}${optionalAttr('Verfalldatum', p.expiryDate)}` +
    `${optionalAttr('RetourenAnteilTyp', verdict)}/>`
  );
}

function positionAttributes(el: XmlElement): ReturnPosition {
  checkNoContent(el);
  return {
    positionRef: intAttribute(el, 'PosRefID', 1, MAX_POSITION_REF),
    deliveryNoteNumber: lieferscheinnummerAttribute(el, 'Lieferscheinnummer'),
    pzn: pznAttribute(el, 'PZN'),
    quantity: intAttribute(el, 'RetourenMenge', 1, MAX_RETURN_QUANTITY),
    reason: enumAttribute(el, 'Retouregrund', RETOURE_GRUENDE),
    batch: optionalAttribute(el, 'Charge', batch),
    expiryDate: optionalAttribute(el, 'Verfalldatum', dateAttribute),
  };
}

export function readPosition(el: XmlElement): ReturnPosition {
  checkAttributes(el, POSITION_ATTRIBUTES);
  return positionAttributes(el);
}

export function readAssessedPosition(el: XmlElement): AssessedReturnPosition {
  checkAttributes(el, ASSESSED_POSITION_ATTRIBUTES);
  return {
    ...positionAttributes(el),
    verdict: enumAttribute(el, 'RetourenAnteilTyp', RETOUREN_ANTEIL_TYPEN),
  };
}

/** All children of `el` are 1..999 `Position` elements in namespace `ns`. */
export function readPositions<T>(el: XmlElement, ns: string, read: (el: XmlElement) => T): T[] {
  const c = el.children;
  const count = runOf(c, 0, ns, 'Position', 1, MAX_RETURN_POSITIONS);
  expectEnd(c, count);
  return readEach(c, 0, count, 'Position', read);
}

/** The header of an element with element-only content and these attributes (the header's, or more). */
export function readHeader(el: XmlElement, allowed: readonly string[] = HEADER_ATTRIBUTES): ReturnHeader {
  checkAttributes(el, allowed);
  checkNoText(el);
  return { id: uuidAttribute(el, 'ID'), supportId: intAttribute(el, 'RetoureSupportID', 1, SUPPORT_ID_MAX) };
}

export function writeHeader(h: ReturnHeader): string {
  return `ID="${escapeAttr(h.id)}" RetoureSupportID="${h.supportId}"`;
}

/** What a return operation module defines: the request side, and the content of its answer's `return`. */
export interface ReturnOperationCodec<Req, A extends ReturnHeader>
  extends Pick<OperationCodec<Req, { answer?: A }>, 'name' | 'encodeRequest' | 'readRequest'> {
  /** The children of `return` (its header attributes are written here). */
  writeAnswer(answer: A): string;
  /** Reads `return` (check and read its attributes with `readHeader`). */
  readAnswer(ret: XmlElement, ns: string): A;
}

/**
 * A return operation (retourenavisAnfragen, retourenavisAnkuendigen): v2 only, on the Retourenavis
 * service, answered by a wrapper whose `return` is optional (`{}` without it) and carries the header.
 */
export function defineReturnOperation<Req, A extends ReturnHeader>(
  codec: ReturnOperationCodec<Req, A>,
): Msv3Operation<Req, { answer?: A }> {
  const { name, writeAnswer, readAnswer } = codec;
  const wrapper = `${name}Response`;
  return defineOperation({
    name,
    service: 'retourenavis',
    v2Only: true,
    encodeRequest: codec.encodeRequest,
    readRequest: codec.readRequest,
    encodeResponse: (version, { answer }) =>
      wrapEnvelope(
        version,
        answer === undefined
          ? `<m:${wrapper}/>`
          : `<m:${wrapper}><return ${writeHeader(answer)}>${writeAnswer(answer)}</return></m:${wrapper}>`,
      ),
    readResponse: (el) => readOptionalReturn(el, 'answer', readAnswer),
  });
}
