import { type Msv3Version, msv3Namespace } from '../envelope.js';
import { type Defektgrund, defektgruende, maxQuantity, type Pzn } from '../model.js';
import { holdsAt, type XmlElement } from '../xml/parse.js';
import { DecodeFailure, XSI_NS } from '../xml/read.js';

/**
 * Strict readers and fast writers for the MSV3 field types, shared by the operation codecs.
 *
 * Readers walk an element's children in XSD sequence order with an index, so order, required elements,
 * unexpected elements and max counts are all checked in one pass without allocating. A failure throws a
 * `DecodeFailure` whose message starts with a path relative to the element being read
 * (`Menge: 'x' is not an integer`); each container prefixes its own segment on the way up
 * (`rethrowWithin`), so the full path (`return/Artikel[3]/Anteile[1]/Menge`) is only built on failure.
 * No regular expressions run on the hot path.
 */

/** Per-version facts the codecs need, computed once. */
export interface WireContext {
  version: Msv3Version;
  /** The version namespace: everything below the wrapper's children is qualified with it. */
  ns: string;
  maxQuantity: number;
  availabilityReasons: readonly Defektgrund[];
  orderReasons: readonly Defektgrund[];
}

const CONTEXTS: Record<Msv3Version, WireContext> = {
  1: wireContextFor(1),
  2: wireContextFor(2),
};

function wireContextFor(version: Msv3Version): WireContext {
  return {
    version,
    ns: msv3Namespace(version),
    maxQuantity: maxQuantity(version),
    availabilityReasons: defektgruende(version, false),
    orderReasons: defektgruende(version, true),
  };
}

export function wireContext(version: Msv3Version): WireContext {
  return CONTEXTS[version];
}

/**
 * The context for decoding below `wrapper`: its own namespace string is used for comparisons, so
 * elements declared in the same scope compare by identity (V8's fast path) rather than by content.
 */
export function decodingContext(wrapper: XmlElement, version: Msv3Version): WireContext {
  const base = CONTEXTS[version];
  return {
    version,
    ns: wrapper.ns,
    maxQuantity: base.maxQuantity,
    availabilityReasons: base.availabilityReasons,
    orderReasons: base.orderReasons,
  };
}

export const SUPPORT_ID_MAX = 999_999;

// ---------------------------------------------------------------------------------------------------
// Failures and paths

export function fail(path: string, detail: string): never {
  throw new DecodeFailure(`${path}: ${detail}`);
}

/** Prefixes a failure from a child with the child's path segment, e.g. `Artikel[3]`. */
export function rethrowWithin(segment: string, error: unknown): never {
  if (error instanceof DecodeFailure) throw new DecodeFailure(`${segment}/${error.message}`);
  throw error;
}

/** For a run of simple elements: turns the leaf's `Pzn: …` into `Pzn[3]: …`. */
export function rethrowAtIndex(local: string, index: number, error: unknown): never {
  if (error instanceof DecodeFailure && error.message.startsWith(`${local}:`)) {
    throw new DecodeFailure(`${local}[${index + 1}]${error.message.slice(local.length)}`);
  }
  throw error;
}

/** Fails when a decoded answer is not in the version the caller asked for. */
export function checkVersion(found: Msv3Version, expected: Msv3Version | undefined): void {
  if (expected !== undefined && found !== expected) {
    throw new DecodeFailure(
      `expected an MSV3 v${expected} message, found v${found} (${msv3Namespace(found)})`,
    );
  }
}

function describe(el: XmlElement): string {
  return `<${el.qname}>${el.ns === '' ? ' (unqualified)' : ` in ${el.ns}`}`;
}

/** The element `local` is there, but in another namespace than the XSD gives it. */
function wrongNamespace(el: XmlElement, local: string, ns: string): never {
  const expected = ns === '' ? 'unqualified (no namespace)' : `in ${ns}`;
  return fail(local, `element in the wrong namespace: found ${describe(el)}, the XSD has it ${expected}`);
}

// ---------------------------------------------------------------------------------------------------
// Sequences

/** The child at `i` when it has this namespace and local name. */
export function isAt(children: XmlElement[], i: number, ns: string, local: string): boolean {
  if (i >= children.length) return false;
  const el = children[i]!;
  return el.local === local && el.ns === ns;
}

/** The child at `i`, which must be the required element `local`. */
export function expectAt(children: XmlElement[], i: number, ns: string, local: string): XmlElement {
  if (i < children.length) {
    const el = children[i]!;
    if (el.local === local) return el.ns === ns ? el : wrongNamespace(el, local, ns);
    return fail(local, `missing required element (found ${describe(el)} instead)`);
  }
  return fail(local, 'missing required element');
}

/** How many consecutive children from `i` on have this name. */
export function countRun(children: XmlElement[], i: number, ns: string, local: string): number {
  let n = 0;
  while (i + n < children.length) {
    const el = children[i + n]!;
    if (el.local !== local || el.ns !== ns) break;
    n++;
  }
  return n;
}

export function checkCount(local: string, count: number, min: number, max: number): void {
  if (count < min)
    fail(local, count === 0 ? 'missing required element' : `${count} elements, at least ${min}`);
  if (count > max) fail(local, `${count} elements, at most ${max} allowed`);
}

/** Everything after `i` is unexpected. */
export function expectEnd(children: XmlElement[], i: number): void {
  if (i < children.length) {
    const el = children[i]!;
    fail(el.local, `unexpected element ${describe(el)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Attributes

/**
 * Refuses unqualified attributes that the XSD does not declare, and qualified ones outside xsi, or
 * whose prefix the document does not declare. `own` is the element's own path segment (`Menge`) where
 * the caller's path ends above the element.
 */
export function checkAttributes(el: XmlElement, allowed: readonly string[], own?: string): void {
  const a = el.attrs;
  if (a === null) return;
  for (let k = 0; k < a.length; k += 2) {
    const name = a[k]!;
    const colon = name.indexOf(':');
    if (colon === -1) {
      if (!allowed.includes(name)) fail(attributePath(own, name), 'attribute not allowed here');
      continue;
    }
    const prefix = name.slice(0, colon);
    const uri = el.scope.resolveDeclared(prefix);
    if (uri === XSI_NS) continue;
    if (uri === undefined)
      fail(attributePath(own, name), `undeclared namespace prefix ${prefix} (no xmlns:${prefix} in scope)`);
    fail(attributePath(own, name), `attribute in namespace ${uri} not allowed here`);
  }
}

/** Built only for a failure: `Menge/@xsi:nil`, or `@Id` on the caller's own element. */
function attributePath(own: string | undefined, name: string): string {
  return own === undefined ? `@${name}` : `${own}/@${name}`;
}

export function attribute(el: XmlElement, name: string): string {
  const v = el.attr(name);
  if (v === undefined) fail(`@${name}`, 'missing required attribute');
  return v;
}

export function uuidAttribute(el: XmlElement, name: string): string {
  const v = attribute(el, name);
  if (!isUuid(v)) fail(`@${name}`, `'${clip(v)}' is not a uuid`);
  return v;
}

export function intAttribute(el: XmlElement, name: string, min: number, max: number): number {
  return intValue(attribute(el, name), `@${name}`, min, max);
}

export function booleanAttribute(el: XmlElement, name: string): boolean {
  return booleanValue(attribute(el, name), `@${name}`);
}

export function enumAttribute<T extends string>(el: XmlElement, name: string, allowed: readonly T[]): T {
  return enumValue(attribute(el, name), allowed, `@${name}`);
}

export function kennungAttribute(el: XmlElement, name: string): string {
  const v = attribute(el, name);
  if (!isDruckbareKennung(v)) fail(`@${name}`, `'${clip(v)}' is not a printable id ([A-Z0-9+-_]{1,20})`);
  return v;
}

// ---------------------------------------------------------------------------------------------------
// Leaves. Numbers, booleans, enums and dates are read straight from the document text (no slice per
// value): a leaf whose text is one plain range is parsed in place, anything else via `text()`.

const NONE: readonly string[] = [];

/** A simple-typed element: no child elements, no attributes except xsi ones. */
function checkLeaf(el: XmlElement, local: string): void {
  if (el.children.length !== 0) fail(local, 'expected text, found child elements');
  if (el.attrs !== null) checkAttributes(el, NONE, local);
}

export function leafText(el: XmlElement, local: string): string {
  checkLeaf(el, local);
  return el.text();
}

/** `xsi:nil="true"` on a nillable element, which must then be empty. */
function nilled(el: XmlElement, local: string): boolean {
  const a = el.attrs;
  if (a === null) return false;
  const v = nilAttribute(el, a);
  if (v === undefined) return false;
  const nil = booleanAt(v, 0, v.length, `${local}/@xsi:nil`);
  if (nil && (el.children.length !== 0 || !isBlank(el.text()))) fail(local, 'nil element with content');
  return nil;
}

// Per scope, the attribute name found to mean xsi:nil (nearly always the same one), so the prefix is
// resolved once per document rather than per element. Weak keys: nothing outlives its document.
const nilNameOfScope = new WeakMap<object, string>();

function nilAttribute(el: XmlElement, a: string[]): string | undefined {
  const known = nilNameOfScope.get(el.scope);
  for (let k = 0; k < a.length; k += 2) {
    const name = a[k]!;
    if (name === known) return a[k + 1];
    const colon = name.length - 4;
    if (colon < 1 || name.charCodeAt(colon) !== 58 || !name.endsWith('nil')) continue;
    if (el.scope.resolve(name.slice(0, colon)) === XSI_NS) {
      nilNameOfScope.set(el.scope, name);
      return a[k + 1];
    }
  }
  return undefined;
}

export function readInt(el: XmlElement, local: string, min: number, max: number): number {
  checkLeaf(el, local);
  const start = el.plainTextStart;
  if (start === -1) {
    const v = el.text();
    return intAt(v, 0, v.length, local, min, max);
  }
  return intAt(el.sourceText, start, el.plainTextEnd, local, min, max);
}

export function readNillableInt(el: XmlElement, local: string, min: number, max: number): number | null {
  return nilled(el, local) ? null : readInt(el, local, min, max);
}

export function readPzn(el: XmlElement, local: string): Pzn {
  checkLeaf(el, local);
  const start = el.plainTextStart;
  if (start === -1) {
    const v = el.text();
    return pznAt(v, 0, v.length, local);
  }
  return pznAt(el.sourceText, start, el.plainTextEnd, local);
}

export function readBoolean(el: XmlElement, local: string): boolean {
  checkLeaf(el, local);
  const start = el.plainTextStart;
  if (start === -1) {
    const v = el.text();
    return booleanAt(v, 0, v.length, local);
  }
  return booleanAt(el.sourceText, start, el.plainTextEnd, local);
}

export function readEnum<T extends string>(el: XmlElement, local: string, allowed: readonly T[]): T {
  checkLeaf(el, local);
  const start = el.plainTextStart;
  if (start === -1) {
    const v = el.text();
    return enumAt(v, 0, v.length, allowed, local);
  }
  return enumAt(el.sourceText, start, el.plainTextEnd, allowed, local);
}

/** xs:dateTime, returned as written (offset and fraction kept, surrounding whitespace removed). */
export function readNillableDateTime(el: XmlElement, local: string): string | null {
  if (nilled(el, local)) return null;
  checkLeaf(el, local);
  let s = el.sourceText;
  let start = el.plainTextStart;
  let end = el.plainTextEnd;
  if (start === -1) {
    s = el.text();
    start = 0;
    end = s.length;
  }
  return dateTimeAt(s, start, end, local);
}

/** An xs:dateTime in `s[start, end)`, returned as written without surrounding whitespace. */
export function dateTimeAt(s: string, start: number, end: number, path: string): string {
  while (start < end && isSpace(s.charCodeAt(start))) start++;
  while (end > start && isSpace(s.charCodeAt(end - 1))) end--;
  if (!isDateTimeAt(s, start, end)) fail(path, `'${clip(s.slice(start, end))}' is not an xs:dateTime`);
  return s.slice(start, end);
}

/** xs:string with length facets counted in characters (code points); whitespace is preserved. */
export function readString(el: XmlElement, local: string, min: number, max: number): string {
  const v = leafText(el, local);
  checkLength(v, local, min, max);
  return v;
}

export function readKennung(el: XmlElement, local: string): string {
  const v = leafText(el, local);
  if (!isDruckbareKennung(v)) fail(local, `'${clip(v)}' is not a printable id ([A-Z0-9+-_]{1,20})`);
  return v;
}

export function checkLength(v: string, path: string, min: number, max: number): void {
  const n = v.length <= max && v.length >= min * 2 ? v.length : codePointLength(v);
  if (n < min || n > max) fail(path, `length ${n} is outside ${min}..${max}`);
}

// ---------------------------------------------------------------------------------------------------
// Lexical values, read from `s[start, end)`; surrounding whitespace is ignored (xs:whiteSpace collapse).

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isSpace(s.charCodeAt(i))) return false;
  return true;
}

/** An integer (optional sign, leading zeros allowed) within min..max. */
export function intAt(s: string, start: number, end: number, path: string, min: number, max: number): number {
  while (start < end && isSpace(s.charCodeAt(start))) start++;
  while (end > start && isSpace(s.charCodeAt(end - 1))) end--;
  let i = start;
  const sign = s.charCodeAt(i);
  if (sign === 43 || sign === 45) i++;
  if (i >= end) fail(path, `'${clip(s.slice(start, end))}' is not an integer`);
  let n = 0;
  for (; i < end; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) fail(path, `'${clip(s.slice(start, end))}' is not an integer`);
    if (n < 1e15) n = n * 10 + d;
  }
  if (sign === 45) n = -n;
  if (n < min || n > max) fail(path, `${clip(s.slice(start, end))} is outside ${min}..${max}`);
  return n;
}

export function intValue(raw: string, path: string, min: number, max: number): number {
  // The text servers write, up to nine digits and nothing else, read here; anything else (a sign,
  // whitespace, more digits, an error) by `intAt`. Here `raw` is always a short string of its own,
  // where `intAt` also reads ranges of whole documents: on Node 24 a call of it cost about 250
  // instructions for a one- or two-digit quantity (docs/performance.md "Smaller steps").
  const length = raw.length;
  let n = 0;
  let i = 0;
  if (length < 10) {
    for (; i < length; i++) {
      const d = digit(raw, i);
      if (d < 0) break;
      n = n * 10 + d;
    }
  }
  if (i === length && length !== 0 && n >= min && n <= max) return n;
  return intAt(raw, 0, length, path, min, max);
}

function booleanAt(s: string, start: number, end: number, path: string): boolean {
  while (start < end && isSpace(s.charCodeAt(start))) start++;
  while (end > start && isSpace(s.charCodeAt(end - 1))) end--;
  const len = end - start;
  const c = s.charCodeAt(start);
  if (
    len === 4 &&
    c === 116 &&
    s.charCodeAt(start + 1) === 114 &&
    s.charCodeAt(start + 2) === 117 &&
    s.charCodeAt(start + 3) === 101
  )
    return true;
  if (
    len === 5 &&
    c === 102 &&
    s.charCodeAt(start + 1) === 97 &&
    s.charCodeAt(start + 2) === 108 &&
    s.charCodeAt(start + 3) === 115 &&
    s.charCodeAt(start + 4) === 101
  )
    return false;
  if (len === 1 && (c === 49 || c === 48)) return c === 49;
  return fail(path, `'${clip(s.slice(start, end))}' is not a boolean`);
}

export function booleanValue(raw: string, path: string): boolean {
  // The forms servers write, compared whole: one comparison each, where reading the text character by
  // character took about 250 instructions (docs/performance.md "Smaller steps").
  if (raw === 'false') return false;
  if (raw === 'true') return true;
  return booleanAt(raw, 0, raw.length, path);
}

/** Returns the matching value of `allowed` itself (a shared constant rather than a copy of the text). */
export function enumAt<T extends string>(
  s: string,
  start: number,
  end: number,
  allowed: readonly T[],
  path: string,
): T {
  // One native compare with each value of the right length; text with whitespace takes the slow path.
  const length = end - start;
  for (const value of allowed) if (value.length === length && holdsAt(s, start, value)) return value;
  const raw = s.slice(start, end).trim();
  const k = (allowed as readonly string[]).indexOf(raw);
  if (k === -1) fail(path, `'${clip(raw)}' is not one of ${allowed.join(', ')}`);
  return allowed[k]!;
}

export function enumValue<T extends string>(raw: string, allowed: readonly T[], path: string): T {
  return enumAt(raw, 0, raw.length, allowed, path);
}

/** Leading zeros that pad a PZN of n digits to 8. */
const ZERO_PADS = ['00000000', '0000000', '000000', '00000', '0000', '000', '00', '0'];

/** Wire PZN (xs:long, no leading zeros needed) → 8-digit string; longer values (EANs) are kept. */
function pznAt(s: string, start: number, end: number, path: string): Pzn {
  while (start < end && isSpace(s.charCodeAt(start))) start++;
  while (end > start && isSpace(s.charCodeAt(end - 1))) end--;
  const from = s.charCodeAt(start) === 43 ? start + 1 : start;
  if (from >= end) fail(path, `'${clip(s.slice(start, end))}' is not a PZN`);
  let first = -1;
  for (let i = from; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) fail(path, `'${clip(s.slice(start, end))}' is not a PZN`);
    if (first === -1 && c !== 48) first = i;
  }
  if (first === -1) return ZERO_PADS[0]!;
  const digits = end - first;
  if (digits > 18) fail(path, `'${clip(s.slice(start, end))}' is too long for a PZN`);
  const value = first === 0 && end === s.length ? s : s.slice(first, end);
  return digits >= 8 ? value : ZERO_PADS[digits]! + value;
}

export function pznValue(raw: string, path: string): Pzn {
  // One to eight digits and nothing else, as servers write a PZN: padded here (leading zeros in the
  // text are padding too); anything else by `pznAt`, for the same reason as in `intValue`.
  const length = raw.length;
  if (length !== 0 && length <= 8) {
    let i = 0;
    while (i < length && digit(raw, i) >= 0) i++;
    if (i === length) return length === 8 ? raw : ZERO_PADS[length]! + raw;
  }
  return pznAt(raw, 0, length, path);
}

/** 8-digit model PZN → wire integer text. Throws RangeError for anything but 1–18 digits. */
export function pznToWireText(pzn: Pzn): string {
  const len = pzn.length;
  if (len === 0 || len > 18) throw new RangeError(`'${pzn}' is not a PZN`);
  let first = -1;
  for (let i = 0; i < len; i++) {
    const c = pzn.charCodeAt(i);
    if (c < 48 || c > 57) throw new RangeError(`'${pzn}' is not a PZN`);
    if (first === -1 && c !== 48) first = i;
  }
  return first === -1 ? '0' : first === 0 ? pzn : pzn.slice(first);
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

export function isUuid(v: string): boolean {
  if (v.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = v.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!isHex(c)) return false;
  }
  return true;
}

/** DruckbareKennung: `[A-Z0-9+\-_]{1,20}`. */
export function isDruckbareKennung(v: string): boolean {
  if (v.length === 0 || v.length > 20) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 95)) return false;
  }
  return true;
}

function digit(v: string, i: number): number {
  const d = v.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -100;
}

/** Two digits at `i` as a number, negative when either is not a digit. */
function twoDigits(v: string, i: number): number {
  return digit(v, i) * 10 + digit(v, i + 1);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export function isDateTime(v: string): boolean {
  return isDateTimeAt(v, 0, v.length);
}

/**
 * The usual xs:dateTime, as a regular-expression source without captures or '<': a four-digit year
 * other than 0000, a day the month has (29 February left out), hours 00 to 23, an optional fraction
 * and an optional offset up to ±14:00. Every text it matches whole is one `isDateTimeAt` accepts (a
 * property test holds the two together). The fast path matches it inside a delivery part's pattern
 * (`anteile.ts`), so a usual value needs no check of its own; any other text gets `isDateTimeAt`.
 */
export const USUAL_DATE_TIME_SOURCE = [
  String.raw`(?!0000)\d{4}-`,
  String.raw`(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))`,
  String.raw`T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?`,
  String.raw`(?:Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?`,
].join('');

/** xs:dateTime lexical form: `-?YYYY-MM-DDThh:mm:ss(.s+)?(Z|(+|-)hh:mm)?`. */
function isDateTimeAt(v: string, start: number, end: number): boolean {
  let i = v.charCodeAt(start) === 45 ? start + 1 : start;
  const yearStart = i;
  let year = 0;
  for (; i < end; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) break;
    if (year < 1e9) year = year * 10 + d;
  }
  const yearDigits = i - yearStart;
  if (yearDigits < 4 || (yearDigits > 4 && v.charCodeAt(yearStart) === 48) || year === 0) return false;
  if (end < i + 15) return false;
  if (v.charCodeAt(i) !== 45 || v.charCodeAt(i + 3) !== 45 || v.charCodeAt(i + 6) !== 84) return false;
  if (v.charCodeAt(i + 9) !== 58 || v.charCodeAt(i + 12) !== 58) return false;
  const month = twoDigits(v, i + 1);
  const day = twoDigits(v, i + 4);
  const hour = twoDigits(v, i + 7);
  const minute = twoDigits(v, i + 10);
  const second = twoDigits(v, i + 13);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour < 0 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  i += 15;
  let fraction = false;
  if (i < end && v.charCodeAt(i) === 46) {
    const from = ++i;
    for (; i < end; i++) {
      const d = v.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      if (d !== 0) fraction = true;
    }
    if (i === from) return false;
  }
  if (hour > 24 || (hour === 24 && (minute !== 0 || second !== 0 || fraction))) return false;
  if (i === end) return true;
  const z = v.charCodeAt(i);
  if (z === 90) return i + 1 === end;
  if ((z !== 43 && z !== 45) || end !== i + 6 || v.charCodeAt(i + 3) !== 58) return false;
  const offsetHours = twoDigits(v, i + 1);
  const offsetMinutes = twoDigits(v, i + 4);
  return (
    offsetHours >= 0 &&
    offsetMinutes >= 0 &&
    offsetMinutes <= 59 &&
    (offsetHours < 14 || (offsetHours === 14 && offsetMinutes === 0))
  );
}

export function codePointLength(v: string): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < v.length) {
      const d = v.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function clip(v: string): string {
  return v.length > 40 ? `${v.slice(0, 40)}…` : v;
}

// ---------------------------------------------------------------------------------------------------
// Writers

/** The v1 and v2 names of "not deliverable by the manufacturer" are translated to the target version. */
export function defektgrundForVersion(version: Msv3Version, grund: Defektgrund): Defektgrund {
  if (version === 2 && grund === 'NichtLieferbar') return 'HerstellerNichtLieferbar';
  if (version === 1 && grund === 'HerstellerNichtLieferbar') return 'NichtLieferbar';
  return grund;
}

// ---------------------------------------------------------------------------------------------------
// Wrappers (docs/msv3.md "Element qualification": qualified wrapper, unqualified children)

export function soapActionFor(version: Msv3Version, operation: string): string {
  return `urn:msv3:v${version}:Msv3:${operation}`;
}

export interface RequestParts {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /** The unqualified element after it (`verfuegbarkeitsanfrage`, `bestellung`, …). */
  payload: XmlElement;
}

/** The request wrapper's first child: the unqualified `clientSoftwareKennung`, 1–80 characters. */
export function readClientSoftwareId(children: XmlElement[]): string {
  return readString(expectAt(children, 0, '', 'clientSoftwareKennung'), 'clientSoftwareKennung', 1, 80);
}

/** The request wrapper's children: `clientSoftwareKennung`, then `payloadName`, both unqualified. */
export function requestParts(wrapper: XmlElement, payloadName: string): RequestParts {
  if (wrapper.attrs !== null) checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = readClientSoftwareId(c);
  const payload = expectAt(c, 1, '', payloadName);
  expectEnd(c, 2);
  return { clientSoftwareId, payload };
}

/** The response wrapper's single unqualified `return` element. */
export function responseReturn(wrapper: XmlElement): XmlElement {
  if (wrapper.attrs !== null) checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const ret = expectAt(c, 0, '', 'return');
  expectEnd(c, 1);
  return ret;
}
