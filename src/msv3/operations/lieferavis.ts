import { wrapEnvelope } from '../envelope.js';
import { AUFTRAGSARTEN, type Auftragsart, type Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr } from '../xml/write.js';
import {
  checkedPattern,
  checkNoContent,
  checkNoText,
  dateAttribute,
  dateTimeAttribute,
  isBarcodeReferenz,
  lieferscheinnummerAttribute,
  optionalAttr,
  optionalAttribute,
  pznAttribute,
  readEach,
  readUuid,
  runOf,
  stringAttribute,
} from './extra-fields.js';
import {
  attribute,
  booleanAttribute,
  checkAttributes,
  enumAttribute,
  expectEnd,
  intAttribute,
  isAt,
  kennungAttribute,
  pznToWireText,
  responseReturn,
  rethrowWithin,
  uuidAttribute,
} from './fields.js';
import { defineOperation, type Msv3Operation, type OperationCodec } from './operation.js';

/**
 * Delivery notices (`LieferavisAbfragenAntwort`, docs/msv3.md "Delivery notices"), the answer shared by
 * lieferavisAbfrageNeu and lieferavisAbfrageHist: one notice per delivery note, its lines in printed
 * order, each line with delivered portions (`Anteil`) and shortages (`Fehlmenge`). Annotation-only rules
 * (a line has at least one portion or shortage; Tour or Lieferzeitpunkt is set; GebindeId only for
 * VERSAND) are left to the caller; the codec enforces the schema.
 */

export const MAX_DELIVERY_NOTICES = 999;
const MAX_NOTICE_LINES = 9999;
const MAX_LINE_PORTIONS = 99;
const MAX_LINE_SHORTAGES = 99;
const INT_MAX = 2_147_483_647;

/** `Anteil`: a delivered portion of a line. */
export interface DeliveredPortion {
  /** `@AuftragsID`, uuid of the sub-order when the assignment is unambiguous. */
  orderId?: string;
  /** `@MengeGeliefert`, ≥ 1. */
  quantity: number;
  /** `@Packstuecknummer`, 1–20 characters: the tote or parcel, usually a barcode. */
  parcelNumber?: string;
  /** `@Charge`, 0–50 characters: the batch. */
  batch?: string;
  /** `@Verfalldatum`, xs:date as written: the last usable day. */
  expiryDate?: string;
}

/** `Fehlmenge`: confirmed at order time but not delivered; no later delivery may be assumed. */
export interface Shortage {
  /** `@AuftragsID`. */
  orderId?: string;
  /** `@Menge`, ≥ 1. */
  quantity: number;
}

/** `Zeile`: one printed line of the delivery note (a PZN may appear in several lines). */
export interface DeliveryNoticeLine {
  /** `@PZN`. */
  pzn: Pzn;
  /** `@Artikelbezeichnung`, 1–50 characters. */
  articleName?: string;
  /** `@GebindeId`, printable id (VERSAND only). */
  containerId?: string;
  /** `Anteil`, 0..99. */
  delivered: DeliveredPortion[];
  /** `Fehlmenge`, 0..99. */
  shortages: Shortage[];
}

/** `Lieferavis`: the notice for one delivery note. */
export interface DeliveryNotice {
  /** `@Lieferscheinnummer`: the printed delivery-note number, the notice's key. */
  deliveryNoteNumber: string;
  /** `@BarcodeReferenz`: the barcode on the paper note, prefix included. */
  barcodeReference: string;
  /** `@Auftragsart`. */
  orderType: Auftragsart;
  /** `@Auftragskennung`, printable id. */
  orderLabel: string;
  /** `@Belegdatum`, xs:date as written. */
  documentDate: string;
  /** `@Lieferzeitpunkt`, xs:dateTime as written: expected arrival, possibly approximate. */
  deliveryTime?: string;
  /** `@Tour`, 1–80 characters. */
  tour?: string;
  /** `@FehlmengenEnthalten`: at least one line has a shortage (tell the user). */
  hasShortages: boolean;
  /** `Zeile`, 1..9999, in printed order. */
  lines: DeliveryNoticeLine[];
  /** `DokumentId`: the PDF delivery note, fetched with dokumentAbfragen. */
  documentId?: string;
}

/** The answer of lieferavisAbfrageNeu and lieferavisAbfrageHist. */
export interface DeliveryNoticesResponse {
  /** `Lieferavis`, 0..999. */
  notices: DeliveryNotice[];
}

const NOTICE_ATTRIBUTES = [
  'Lieferscheinnummer',
  'BarcodeReferenz',
  'Auftragsart',
  'Auftragskennung',
  'Belegdatum',
  'Lieferzeitpunkt',
  'Tour',
  'FehlmengenEnthalten',
];
const LINE_ATTRIBUTES = ['PZN', 'Artikelbezeichnung', 'GebindeId'];
const PORTION_ATTRIBUTES = ['AuftragsID', 'MengeGeliefert', 'Packstuecknummer', 'Charge', 'Verfalldatum'];
const SHORTAGE_ATTRIBUTES = ['AuftragsID', 'Menge'];
const NONE: readonly string[] = [];

function writeLine(line: DeliveryNoticeLine): string {
  let s =
    `<m:Zeile PZN="${pznToWireText(line.pzn)}"` +
    `${optionalAttr('Artikelbezeichnung', line.articleName)}${optionalAttr('GebindeId', line.containerId)}>`;
  for (const p of line.delivered) {
    s +=
      `<m:Anteil${optionalAttr('AuftragsID', p.orderId)} MengeGeliefert="${p.quantity}"` +
      `${optionalAttr('Packstuecknummer', p.parcelNumber)}${optionalAttr('Charge', p.batch)}` +
      `${optionalAttr('Verfalldatum', p.expiryDate)}/>`;
  }
  for (const f of line.shortages)
    s += `<m:Fehlmenge${optionalAttr('AuftragsID', f.orderId)} Menge="${f.quantity}"/>`;
  return `${s}</m:Zeile>`;
}

function writeNotice(n: DeliveryNotice): string {
  let s =
    `<m:Lieferavis Lieferscheinnummer="${escapeAttr(n.deliveryNoteNumber)}" BarcodeReferenz="${escapeAttr(n.barcodeReference)}"` +
    ` Auftragsart="${n.orderType}" Auftragskennung="${escapeAttr(n.orderLabel)}" Belegdatum="${escapeAttr(n.documentDate)}"` +
    `${optionalAttr('Lieferzeitpunkt', n.deliveryTime)}${optionalAttr('Tour', n.tour)}` +
    ` FehlmengenEnthalten="${n.hasShortages}">`;
  for (const line of n.lines) s += writeLine(line);
  if (n.documentId !== undefined) s += `<m:DokumentId>${escapeAttr(n.documentId)}</m:DokumentId>`;
  return `${s}</m:Lieferavis>`;
}

/** The response payload `<m:{wrapper}><return>…</return></m:{wrapper}>`. */
function writeDeliveryNotices(wrapper: string, response: DeliveryNoticesResponse): string {
  if (response.notices.length === 0) return `<m:${wrapper}><return/></m:${wrapper}>`;
  let s = `<m:${wrapper}><return>`;
  for (const n of response.notices) s += writeNotice(n);
  return `${s}</return></m:${wrapper}>`;
}

const articleName = stringAttribute(1, 50);
const parcelNumber = stringAttribute(1, 20);
const batch = stringAttribute(0, 50);
const tour = stringAttribute(1, 80);

function readPortion(el: XmlElement): DeliveredPortion {
  checkAttributes(el, PORTION_ATTRIBUTES);
  checkNoContent(el);
  return {
    orderId: optionalAttribute(el, 'AuftragsID', uuidAttribute),
    quantity: intAttribute(el, 'MengeGeliefert', 1, INT_MAX),
    parcelNumber: optionalAttribute(el, 'Packstuecknummer', parcelNumber),
    batch: optionalAttribute(el, 'Charge', batch),
    expiryDate: optionalAttribute(el, 'Verfalldatum', dateAttribute),
  };
}

function readShortage(el: XmlElement): Shortage {
  checkAttributes(el, SHORTAGE_ATTRIBUTES);
  checkNoContent(el);
  return {
    orderId: optionalAttribute(el, 'AuftragsID', uuidAttribute),
    quantity: intAttribute(el, 'Menge', 1, INT_MAX),
  };
}

function readLine(el: XmlElement, ns: string): DeliveryNoticeLine {
  checkAttributes(el, LINE_ATTRIBUTES);
  checkNoText(el);
  const pzn = pznAttribute(el, 'PZN');
  const name = optionalAttribute(el, 'Artikelbezeichnung', articleName);
  const containerId = optionalAttribute(el, 'GebindeId', kennungAttribute);
  const c = el.children;
  const portions = runOf(c, 0, ns, 'Anteil', 0, MAX_LINE_PORTIONS);
  const shortages = runOf(c, portions, ns, 'Fehlmenge', 0, MAX_LINE_SHORTAGES);
  expectEnd(c, portions + shortages);
  return {
    pzn,
    articleName: name,
    containerId,
    delivered: readEach(c, 0, portions, 'Anteil', readPortion),
    shortages: readEach(c, portions, shortages, 'Fehlmenge', readShortage),
  };
}

function readNotice(el: XmlElement, ns: string): DeliveryNotice {
  checkAttributes(el, NOTICE_ATTRIBUTES);
  checkNoText(el);
  const deliveryNoteNumber = lieferscheinnummerAttribute(el, 'Lieferscheinnummer');
  const barcodeReference = checkedPattern(
    attribute(el, 'BarcodeReferenz'),
    '@BarcodeReferenz',
    isBarcodeReferenz,
    'a barcode reference',
  );
  const orderType = enumAttribute(el, 'Auftragsart', AUFTRAGSARTEN);
  const orderLabel = kennungAttribute(el, 'Auftragskennung');
  const documentDate = dateAttribute(el, 'Belegdatum');
  const deliveryTime = optionalAttribute(el, 'Lieferzeitpunkt', dateTimeAttribute);
  const noticeTour = optionalAttribute(el, 'Tour', tour);
  const hasShortages = booleanAttribute(el, 'FehlmengenEnthalten');
  const c = el.children;
  const lineCount = runOf(c, 0, ns, 'Zeile', 1, MAX_NOTICE_LINES);
  const lines = readEach(c, 0, lineCount, 'Zeile', (line) => readLine(line, ns));
  let documentId: string | undefined;
  if (isAt(c, lineCount, ns, 'DokumentId')) documentId = readUuid(c[lineCount]!, 'DokumentId');
  expectEnd(c, documentId === undefined ? lineCount : lineCount + 1);
  return {
    deliveryNoteNumber,
    barcodeReference,
    orderType,
    orderLabel,
    documentDate,
    deliveryTime,
    tour: noticeTour,
    hasShortages,
    lines,
    documentId,
  };
}

/** Reads the response wrapper's `return` (LieferavisAbfragenAntwort). */
function readDeliveryNotices(wrapper: XmlElement): DeliveryNoticesResponse {
  const ret = responseReturn(wrapper);
  try {
    checkAttributes(ret, NONE);
    checkNoText(ret);
    const c = ret.children;
    const count = runOf(c, 0, wrapper.ns, 'Lieferavis', 0, MAX_DELIVERY_NOTICES);
    expectEnd(c, count);
    return { notices: readEach(c, 0, count, 'Lieferavis', (n) => readNotice(n, wrapper.ns)) };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

/**
 * A delivery-notice query (lieferavisAbfrageNeu, lieferavisAbfrageHist): v2 only, on the Lieferavis
 * service, answered with the notices above. The module defines the request side.
 */
export function defineDeliveryNoticesQuery<Req>(
  query: Pick<OperationCodec<Req, DeliveryNoticesResponse>, 'name' | 'encodeRequest' | 'readRequest'>,
): Msv3Operation<Req, DeliveryNoticesResponse> {
  const responseName = `${query.name}Response`;
  return defineOperation({
    ...query,
    service: 'lieferavis',
    v2Only: true,
    encodeResponse: (version, response) =>
      wrapEnvelope(version, writeDeliveryNotices(responseName, response)),
    readResponse: readDeliveryNotices,
  });
}
