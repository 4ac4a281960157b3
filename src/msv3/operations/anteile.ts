import {
  BESTELLUNG_TYPEN,
  type BestellungTyp,
  type Defektgrund,
  type Pzn,
  SUBSTITUTIONSGRUENDE,
  type Substitutionsgrund,
  VERFUEGBARKEIT_TYPEN,
  type VerfuegbarkeitTyp,
} from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import {
  compilePattern,
  type PatternPiece,
  type PlainPattern,
  PlainShape,
  type PlainTags,
  patternsPerTable,
  plainPattern,
  tagIndex,
} from '../xml/plain.js';
import { escapeText } from '../xml/write.js';
import {
  booleanValue,
  checkAttributes,
  checkCount,
  checkLength,
  countRun,
  dateTimeAt,
  defektgrundForVersion,
  enumAt,
  enumValue,
  expectAt,
  expectEnd,
  intValue,
  isAt,
  isDruckbareKennung,
  pznToWireText,
  pznValue,
  readBoolean,
  readEnum,
  readKennung,
  readNillableDateTime,
  readNillableInt,
  readPzn,
  readString,
  rethrowWithin,
  USUAL_DATE_TIME_SOURCE,
  type WireContext,
} from './fields.js';

/**
 * The delivery parts (`Anteile`) and substitutions shared by availability answers
 * (VerfuegbarkeitAnteil, VerfuegbarkeitSubstitution) and order answers (BestellungAnteil,
 * BestellungSubstitution). Business rules from the XSD annotations (sum of quantities, one part per
 * Typ, Grund/Typ pairing, TourId for Normal) are left to the caller; the codec enforces the schema.
 */

/** One part of an availability answer (VerfuegbarkeitAnteil). Absent optional fields are `undefined`. */
export interface AvailabilityPart {
  /** `Menge`, nillable (then `null`). */
  quantity: number | null;
  /** `Typ`. */
  type: VerfuegbarkeitTyp;
  /** `Lieferzeitpunkt`: xs:dateTime exactly as on the wire (offset kept), or `null` when nil. */
  deliveryTime: string | null;
  /** `Tour`, free text 1–80 characters. */
  tour?: string;
  /** `Grund`. Encoders translate NichtLieferbar ⇄ HerstellerNichtLieferbar to the target version. */
  defectReason: Defektgrund;
  /** `Tourabweichung`: mandatory in v2 (encoded as `false` when undefined), absent in v1. */
  tourDeviation?: boolean;
}

/** One part of an order answer (BestellungAnteil). */
export interface OrderPart extends Omit<AvailabilityPart, 'type'> {
  type: BestellungTyp;
  /** `TourId`, a printable id `[A-Z0-9+-_]{1,20}`. */
  tourId?: string;
}

/** `Substitution`: the article is replaced by `deliveredPzn`. */
export interface Substitution {
  /** `Substitutionsgrund`. */
  reason: Substitutionsgrund;
  /** `Grund`: why the requested PZN is not delivered. */
  defectReason: Defektgrund;
  /** `LieferPzn`. */
  deliveredPzn: Pzn;
}

const NO_ATTRIBUTES: readonly string[] = [];

function readPart(el: XmlElement, ctx: WireContext, forOrders: boolean): OrderPart {
  const ns = ctx.ns;
  const c = el.children;
  if (el.attrs !== null) checkAttributes(el, NO_ATTRIBUTES);
  let i = 0;
  const quantity = readNillableInt(expectAt(c, i++, ns, 'Menge'), 'Menge', 1, ctx.maxQuantity);
  const type = readEnum<BestellungTyp>(
    expectAt(c, i++, ns, 'Typ'),
    'Typ',
    forOrders ? BESTELLUNG_TYPEN : VERFUEGBARKEIT_TYPEN,
  );
  const deliveryTime = readNillableDateTime(expectAt(c, i++, ns, 'Lieferzeitpunkt'), 'Lieferzeitpunkt');
  let tour: string | undefined;
  if (isAt(c, i, ns, 'Tour')) tour = readString(c[i++]!, 'Tour', 1, 80);
  const defectReason = readEnum(
    expectAt(c, i++, ns, 'Grund'),
    'Grund',
    forOrders ? ctx.orderReasons : ctx.availabilityReasons,
  );
  let tourId: string | undefined;
  if (forOrders && isAt(c, i, ns, 'TourId')) tourId = readKennung(c[i++]!, 'TourId');
  let tourDeviation: boolean | undefined;
  if (ctx.version === 2)
    tourDeviation = readBoolean(expectAt(c, i++, ns, 'Tourabweichung'), 'Tourabweichung');
  expectEnd(c, i);
  return forOrders
    ? { quantity, type, deliveryTime, tour, defectReason, tourId, tourDeviation }
    : { quantity, type, deliveryTime, tour, defectReason, tourDeviation };
}

/** Reads the run of `Anteile` starting at child `i` (1..max of them); returns them. */
export function readParts(
  children: XmlElement[],
  i: number,
  ctx: WireContext,
  forOrders: boolean,
  max: number,
): OrderPart[] {
  const count = countRun(children, i, ctx.ns, 'Anteile');
  checkCount('Anteile', count, 1, max);
  const parts: OrderPart[] = [];
  for (let k = 0; k < count; k++) {
    try {
      parts.push(readPart(children[i + k]!, ctx, forOrders));
    } catch (error) {
      rethrowWithin(`Anteile[${k + 1}]`, error);
    }
  }
  return parts;
}

export function readSubstitution(el: XmlElement, ctx: WireContext, forOrders: boolean): Substitution {
  try {
    const ns = ctx.ns;
    const c = el.children;
    if (el.attrs !== null) checkAttributes(el, NO_ATTRIBUTES);
    const reason = readEnum(
      expectAt(c, 0, ns, 'Substitutionsgrund'),
      'Substitutionsgrund',
      SUBSTITUTIONSGRUENDE,
    );
    const defectReason = readEnum(
      expectAt(c, 1, ns, 'Grund'),
      'Grund',
      forOrders ? ctx.orderReasons : ctx.availabilityReasons,
    );
    const deliveredPzn = readPzn(expectAt(c, 2, ns, 'LieferPzn'), 'LieferPzn');
    expectEnd(c, 3);
    return { reason, defectReason, deliveredPzn };
  } catch (error) {
    return rethrowWithin('Substitution', error);
  }
}

// ---------------------------------------------------------------------------------------------------
// Fast path (xml/plain.ts): the same elements in their plain form, read straight from the text.

/**
 * The element names that `readPlainParts` and `readPlainSubstitution` read: the `PlainTags` passed to
 * them must be made from a list of names that begins with these (an operation appends its own).
 */
export const PLAIN_PART_NAMES = [
  'Anteile',
  'Menge',
  'Typ',
  'Lieferzeitpunkt',
  'Tour',
  'Grund',
  'TourId',
  'Tourabweichung',
  'Substitution',
  'Substitutionsgrund',
  'LieferPzn',
] as const;

const ANTEILE = tagIndex(PLAIN_PART_NAMES, 'Anteile');
const MENGE = tagIndex(PLAIN_PART_NAMES, 'Menge');
const TYP = tagIndex(PLAIN_PART_NAMES, 'Typ');
const LIEFERZEITPUNKT = tagIndex(PLAIN_PART_NAMES, 'Lieferzeitpunkt');
const TOUR = tagIndex(PLAIN_PART_NAMES, 'Tour');
const GRUND = tagIndex(PLAIN_PART_NAMES, 'Grund');
const TOUR_ID = tagIndex(PLAIN_PART_NAMES, 'TourId');
const TOURABWEICHUNG = tagIndex(PLAIN_PART_NAMES, 'Tourabweichung');
const SUBSTITUTION = tagIndex(PLAIN_PART_NAMES, 'Substitution');
const SUBSTITUTIONSGRUND = tagIndex(PLAIN_PART_NAMES, 'Substitutionsgrund');
const LIEFER_PZN = tagIndex(PLAIN_PART_NAMES, 'LieferPzn');

/** The patterns of one `PlainTags` table: a part's for each answer kind and version, a substitution's. */
interface PartPatterns {
  /** Availability v1, v2, then order answers v1, v2. */
  parts: PlainPattern[];
  substitution: PlainPattern;
}

/**
 * A part's elements after its start tag, to its end tag: captures Menge (text, other empty form), Typ,
 * Lieferzeitpunkt (a usual date-time, other text, other empty form), Tour, Grund, then TourId in order
 * answers and Tourabweichung in version 2.
 */
function partPieces(t: PlainTags, forOrders: boolean, version: number): PatternPiece[] {
  const { leaf, nillable, nillableUsually, optional, tag } = plainPattern;
  return [
    nillable(t[MENGE]!, t[MENGE + 1]!, t[MENGE + 2]!),
    leaf(t[TYP]!, t[TYP + 1]!),
    nillableUsually(
      t[LIEFERZEITPUNKT]!,
      t[LIEFERZEITPUNKT + 1]!,
      t[LIEFERZEITPUNKT + 2]!,
      USUAL_DATE_TIME_SOURCE,
    ),
    optional(leaf(t[TOUR]!, t[TOUR + 1]!)),
    leaf(t[GRUND]!, t[GRUND + 1]!),
    ...(forOrders ? [optional(leaf(t[TOUR_ID]!, t[TOUR_ID + 1]!))] : []),
    ...(version === 2 ? [leaf(t[TOURABWEICHUNG]!, t[TOURABWEICHUNG + 1]!)] : []),
    tag(t[ANTEILE + 1]!),
  ];
}

/** A substitution's elements after its start tag, to its end tag; captures their three texts. */
function substitutionPieces(t: PlainTags): PatternPiece[] {
  const { leaf, tag } = plainPattern;
  return [
    leaf(t[SUBSTITUTIONSGRUND]!, t[SUBSTITUTIONSGRUND + 1]!),
    leaf(t[GRUND]!, t[GRUND + 1]!),
    leaf(t[LIEFER_PZN]!, t[LIEFER_PZN + 1]!),
    tag(t[SUBSTITUTION + 1]!),
  ];
}

const partPatterns = patternsPerTable(
  (t): PartPatterns => ({
    parts: [
      compilePattern(partPieces(t, false, 1)),
      compilePattern(partPieces(t, false, 2)),
      compilePattern(partPieces(t, true, 1)),
      compilePattern(partPieces(t, true, 2)),
    ],
    substitution: compilePattern(substitutionPieces(t)),
  }),
);

/** The patterns of an availability article or an order position in one `PlainTags` table. */
export interface ItemPatterns {
  /**
   * The whole usual item, for version 1 and 2: its start tag, its own leaves, then an optional
   * substitution and one or two parts, then its end tag. Most articles have one part, some two
   * (delivered now and the rest later); reading them in the same match as the article's own leaves
   * saves a regular expression call and a tag read per element (docs/performance.md "Elements read as
   * one pattern"). An item with three parts or more does not match and is read element by element.
   */
  whole: PlainPattern[];
  /** Its own leaves alone, after its start tag, for the element-by-element read. */
  head: PlainPattern;
  /** How many captures its own leaves make (the substitution's begin after them). */
  headCaptures: number;
  open: string;
  close: string;
}

/** `ItemPatterns` of an item with the start tag `open`, its own leaves `head` and the end tag `close`. */
export function itemPatterns(
  t: PlainTags,
  open: string,
  head: readonly PatternPiece[],
  close: string,
  forOrders: boolean,
): ItemPatterns {
  const { optional, run, tag } = plainPattern;
  const substitution = optional(run([tag(t[SUBSTITUTION]!), ...substitutionPieces(t)]));
  const whole = [1, 2].map((version) => {
    const part = run([tag(t[ANTEILE]!), ...partPieces(t, forOrders, version)]);
    return compilePattern([tag(open), ...head, substitution, part, optional(part), tag(close)]);
  });
  const headPattern = compilePattern(head);
  // A pattern that also matches the empty text, run on it, shows every capture group.
  const headCaptures = new RegExp(`(?:${headPattern.re.source})|`).exec('')!.length - 1;
  return { whole, head: headPattern, headCaptures, open, close };
}

/** An item read by `readPlainItem`: its own leaves' texts (captures from 1 on), substitution, parts. */
export interface PlainItem {
  head: RegExpExecArray;
  substitution: Substitution | undefined;
  parts: OrderPart[];
}

/**
 * The next article or position (`patterns`), or undefined when none comes next: in one match when it
 * is usual, else element by element with 1..`maxParts` parts.
 */
export function readPlainItem(
  shape: PlainShape,
  t: PlainTags,
  patterns: ItemPatterns,
  ctx: WireContext,
  forOrders: boolean,
  maxParts: number,
): PlainItem | undefined {
  const m = shape.tryMatch(patterns.whole[ctx.version - 1]!);
  if (m !== null) {
    const first = patterns.headCaptures + 1;
    const substitution = m[first] === undefined ? undefined : substitutionAt(m, first, ctx, forOrders);
    const one = partAt(shape, m, first + 3, ctx, forOrders);
    // The two parts' captures are as many each and the last of the match (the end tag captures nothing).
    const second = first + 3 + (m.length - first - 3) / 2;
    // Typ, a part's third capture, is there whenever the part is.
    const parts = m[second + 2] === undefined ? [one] : [one, partAt(shape, m, second, ctx, forOrders)];
    return { head: m, substitution, parts };
  }
  if (!shape.at(patterns.open)) return undefined;
  const head = shape.match(patterns.head);
  const substitution = shape.at(t[SUBSTITUTION]!)
    ? readPlainSubstitution(shape, t, ctx, forOrders)
    : undefined;
  const parts = readPlainParts(shape, t, ctx, forOrders, maxParts);
  shape.expect(patterns.close);
  return { head, substitution, parts };
}

/** A part after its start tag, read with `pattern` (`partPatterns`, for `forOrders` and the version). */
function readPlainPart(
  shape: PlainShape,
  pattern: PlainPattern,
  ctx: WireContext,
  forOrders: boolean,
): OrderPart {
  return partAt(shape, shape.match(pattern), 1, ctx, forOrders);
}

/** The part whose `partPieces` captures begin at `m[first]`. */
function partAt(
  shape: PlainShape,
  m: RegExpExecArray,
  first: number,
  ctx: WireContext,
  forOrders: boolean,
): OrderPart {
  const mengeNil = m[first + 1];
  if (mengeNil !== undefined) shape.checkNilText(mengeNil);
  const menge = m[first];
  const quantity = menge === undefined ? null : intValue(menge, 'Menge', 1, ctx.maxQuantity);
  const typ = m[first + 2]!;
  const type = enumAt<BestellungTyp>(
    typ,
    0,
    typ.length,
    forOrders ? BESTELLUNG_TYPEN : VERFUEGBARKEIT_TYPEN,
    'Typ',
  );
  const timeNil = m[first + 5];
  if (timeNil !== undefined) shape.checkNilText(timeNil);
  const otherTime = m[first + 4];
  const deliveryTime =
    m[first + 3] ??
    (otherTime === undefined ? null : dateTimeAt(otherTime, 0, otherTime.length, 'Lieferzeitpunkt'));
  const tour = m[first + 6];
  if (tour !== undefined) checkLength(tour, 'Tour', 1, 80);
  const grund = m[first + 7]!;
  const reasons = forOrders ? ctx.orderReasons : ctx.availabilityReasons;
  const defectReason = enumValue(grund, reasons, 'Grund');
  const tourId = forOrders ? m[first + 8] : undefined;
  if (tourId !== undefined && !isDruckbareKennung(tourId)) PlainShape.giveUp();
  const deviation = ctx.version === 2 ? m[first + (forOrders ? 9 : 8)]! : undefined;
  const tourDeviation = deviation === undefined ? undefined : booleanValue(deviation, 'Tourabweichung');
  return forOrders
    ? { quantity, type, deliveryTime, tour, defectReason, tourId, tourDeviation }
    : { quantity, type, deliveryTime, tour, defectReason, tourDeviation };
}

/** `readParts` for the plain form: the run of 1..max `Anteile` next. */
function readPlainParts(
  shape: PlainShape,
  t: PlainTags,
  ctx: WireContext,
  forOrders: boolean,
  max: number,
): OrderPart[] {
  const pattern = partPatterns(t).parts[(forOrders ? 2 : 0) + ctx.version - 1]!;
  const parts: OrderPart[] = [];
  while (shape.at(t[ANTEILE]!)) {
    if (parts.length === max) PlainShape.giveUp();
    parts.push(readPlainPart(shape, pattern, ctx, forOrders));
  }
  if (parts.length === 0) PlainShape.giveUp();
  return parts;
}

/** `readSubstitution` for the plain form, after its start tag. */
function readPlainSubstitution(
  shape: PlainShape,
  t: PlainTags,
  ctx: WireContext,
  forOrders: boolean,
): Substitution {
  return substitutionAt(shape.match(partPatterns(t).substitution), 1, ctx, forOrders);
}

/** The substitution whose `substitutionPieces` captures begin at `m[first]`. */
function substitutionAt(
  m: RegExpExecArray,
  first: number,
  ctx: WireContext,
  forOrders: boolean,
): Substitution {
  const reason = enumValue(m[first]!, SUBSTITUTIONSGRUENDE, 'Substitutionsgrund');
  const reasons = forOrders ? ctx.orderReasons : ctx.availabilityReasons;
  const defectReason = enumValue(m[first + 1]!, reasons, 'Grund');
  const deliveredPzn = pznValue(m[first + 2]!, 'LieferPzn');
  return { reason, defectReason, deliveredPzn };
}

export function writePart(p: OrderPart | AvailabilityPart, ctx: WireContext, forOrders: boolean): string {
  let s =
    p.quantity === null
      ? '<m:Anteile><m:Menge xsi:nil="true"/>'
      : `<m:Anteile><m:Menge>${p.quantity}</m:Menge>`;
  s += `<m:Typ>${p.type}</m:Typ>`;
  s +=
    p.deliveryTime === null
      ? '<m:Lieferzeitpunkt xsi:nil="true"/>'
      : `<m:Lieferzeitpunkt>${escapeText(p.deliveryTime)}</m:Lieferzeitpunkt>`;
  if (p.tour !== undefined) s += `<m:Tour>${escapeText(p.tour)}</m:Tour>`;
  s += `<m:Grund>${defektgrundForVersion(ctx.version, p.defectReason)}</m:Grund>`;
  if (forOrders) {
    const tourId = (p as OrderPart).tourId;
    if (tourId !== undefined) s += `<m:TourId>${escapeText(tourId)}</m:TourId>`;
  }
  if (ctx.version === 2) s += `<m:Tourabweichung>${p.tourDeviation === true}</m:Tourabweichung>`;
  return `${s}</m:Anteile>`;
}

export function writeSubstitution(sub: Substitution, ctx: WireContext): string {
  return (
    `<m:Substitution><m:Substitutionsgrund>${sub.reason}</m:Substitutionsgrund>` +
    `<m:Grund>${defektgrundForVersion(ctx.version, sub.defectReason)}</m:Grund>` +
    `<m:LieferPzn>${pznToWireText(sub.deliveredPzn)}</m:LieferPzn></m:Substitution>`
  );
}
