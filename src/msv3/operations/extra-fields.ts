import type { Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  attribute,
  checkAttributes,
  checkCount,
  checkLength,
  countRun,
  expectAt,
  expectEnd,
  fail,
  isAt,
  isDateTime,
  isUuid,
  leafText,
  pznValue,
  rethrowWithin,
} from './fields.js';

/**
 * Field readers and writers beyond `fields.ts`, used by the contract, take-back, delivery-notice, return
 * and document codecs: xs:date, VertragsdatenZeit, LieferscheinnummerType, BarcodeReferenzType,
 * KundenKennung, optional attributes, runs of repeated elements. Same style as `fields.ts`: failures
 * throw with a path relative to the element being read.
 */

export function isDate(v: string): boolean {
  // An xs:date is an xs:dateTime without the time part; reuse its checks by adding a neutral time.
  const tz = timezoneStart(v);
  return isDateTime(`${v.slice(0, tz)}T00:00:00${v.slice(tz)}`);
}

/** Index where a date's time-zone suffix (`Z`, `+hh:mm`, `-hh:mm`) starts, or the length. */
function timezoneStart(v: string): number {
  if (v.endsWith('Z')) return v.length - 1;
  const sign = v.length - 6;
  const c = v.charCodeAt(sign);
  // `-` also separates year, month and day; an offset's sign is the one six characters from the end
  // that is followed by hh:mm and preceded by the two day digits.
  return sign > 0 && (c === 43 || c === 45) && v.charCodeAt(sign + 3) === 58 ? sign : v.length;
}

const ZEIT = /^([0-9]{2}):([0-9]{2}):00$/;

/** VertragsdatenZeit: xs:time restricted to `\d\d:\d\d:00` (whole minutes, no zone); 24:00:00 is allowed. */
export function isVertragsdatenZeit(v: string): boolean {
  const m = ZEIT.exec(v);
  if (m === null) return false;
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  return (hour < 24 && minute < 60) || (hour === 24 && minute === 0);
}

const NOTE_CHARS = /^[a-zA-Z0-9#+*/\-_]{1,30}$/;
const BARCODE = /^[0-9]*[*+#_?][a-zA-Z0-9#+*/\-_?]*$/;
const KUNDEN_KENNUNG = /^([a-zA-Z0-9]+\\)?[a-zA-Z0-9]+$/;

/** LieferscheinnummerType (also the facets of `GHReferenzID`): 1–30 of `a-z A-Z 0-9 # + * / - _`. */
export function isLieferscheinnummer(v: string): boolean {
  return NOTE_CHARS.test(v);
}

/** BarcodeReferenzType: 1–30 characters, optional digits, one of `* + # _ ?`, then note characters or `?`. */
export function isBarcodeReferenz(v: string): boolean {
  return v.length >= 1 && v.length <= 30 && BARCODE.test(v);
}

/** KundenKennung: 1–80 characters, `([a-zA-Z0-9]+\)?[a-zA-Z0-9]+`. */
export function isKundenKennung(v: string): boolean {
  return v.length <= 80 && KUNDEN_KENNUNG.test(v);
}

/** Whitespace around values of collapsed types (dates, times) is not part of the value. */
function collapsed(v: string): string {
  return v.trim();
}

function checkedDate(raw: string, path: string): string {
  const v = collapsed(raw);
  if (!isDate(v)) fail(path, `'${clip(v)}' is not an xs:date`);
  return v;
}

function checkedDateTime(raw: string, path: string): string {
  const v = collapsed(raw);
  if (!isDateTime(v)) fail(path, `'${clip(v)}' is not an xs:dateTime`);
  return v;
}

function checkedZeit(raw: string, path: string): string {
  const v = collapsed(raw);
  if (!isVertragsdatenZeit(v)) fail(path, `'${clip(v)}' is not a contract time (hh:mm:00)`);
  return v;
}

export function checkedPattern(v: string, path: string, test: (v: string) => boolean, what: string): string {
  if (!test(v)) fail(path, `'${clip(v)}' is not ${what}`);
  return v;
}

export function readZeit(el: XmlElement, local: string): string {
  return checkedZeit(leafText(el, local), local);
}

export function readUuid(el: XmlElement, local: string): string {
  const v = leafText(el, local);
  if (!isUuid(v)) fail(local, `'${clip(v)}' is not a uuid`);
  return v;
}

export function readLieferscheinnummer(el: XmlElement, local: string): string {
  return checkedPattern(leafText(el, local), local, isLieferscheinnummer, 'a delivery-note number');
}

export function dateAttribute(el: XmlElement, name: string): string {
  return checkedDate(attribute(el, name), `@${name}`);
}

export function pznAttribute(el: XmlElement, name: string): Pzn {
  return pznValue(attribute(el, name), `@${name}`);
}

export function lieferscheinnummerAttribute(el: XmlElement, name: string): string {
  return checkedPattern(attribute(el, name), `@${name}`, isLieferscheinnummer, 'a delivery-note number');
}

/** Reads an optional attribute with `read` when it is present. */
export function optionalAttribute<T>(
  el: XmlElement,
  name: string,
  read: (el: XmlElement, name: string) => T,
): T | undefined {
  return el.attr(name) === undefined ? undefined : read(el, name);
}

/** An xs:string attribute with length facets (counted in characters, whitespace preserved). */
export function stringAttribute(min: number, max: number): (el: XmlElement, name: string) => string {
  return (el, name) => {
    const v = attribute(el, name);
    checkLength(v, `@${name}`, min, max);
    return v;
  };
}

export function dateTimeAttribute(el: XmlElement, name: string): string {
  return checkedDateTime(attribute(el, name), `@${name}`);
}

/** Elements whose type has attributes only: no child elements and no character content. */
export function checkNoContent(el: XmlElement): void {
  if (el.children.length !== 0) fail(el.children[0]!.local, 'unexpected element (no content is allowed)');
  if (el.text().trim() !== '') fail('text()', 'character content is not allowed');
}

/** Elements with element-only content that happen to have no children may still carry stray text. */
export function checkNoText(el: XmlElement): void {
  if (el.children.length === 0 && el.text().trim() !== '') fail('text()', 'character content is not allowed');
}

/** A response wrapper without content (the answer of verbindungTesten and lieferavisBestaetigen). */
export function readEmptyWrapper(wrapper: XmlElement): Record<string, never> {
  checkAttributes(wrapper, NONE);
  checkNoText(wrapper);
  expectEnd(wrapper.children, 0);
  return {};
}

/** ` name="value"` for a present value, nothing for an absent one. */
export function optionalAttr(name: string, value: string | undefined): string {
  return value === undefined ? '' : ` ${name}="${escapeAttr(value)}"`;
}

/** Reads `count` children from `start` with `read`, prefixing failures with `local[n]`. */
export function readEach<T>(
  c: XmlElement[],
  start: number,
  count: number,
  local: string,
  read: (el: XmlElement) => T,
): T[] {
  const out: T[] = [];
  for (let k = 0; k < count; k++) {
    try {
      out.push(read(c[start + k]!));
    } catch (error) {
      rethrowWithin(`${local}[${k + 1}]`, error);
    }
  }
  return out;
}

/** Counts the run of `local` children from `start` and checks it against min..max. */
export function runOf(
  c: XmlElement[],
  start: number,
  ns: string,
  local: string,
  min: number,
  max: number,
): number {
  const count = countRun(c, start, ns, local);
  // Name what stands where the first required element should be (often the right name in a wrong namespace).
  if (count === 0 && min > 0) expectAt(c, start, ns, local);
  checkCount(local, count, min, max);
  return count;
}

/**
 * A v2-only request wrapper with a required `clientSoftwareKennung` (plain xs:string there), then a
 * required unqualified `payloadName`, whose fields `read` returns (its failures prefixed with
 * `payloadName`).
 */
export function readV2Request<T extends object>(
  wrapper: XmlElement,
  payloadName: string,
  read: (payload: XmlElement, ns: string) => T,
): { clientSoftwareId: string } & T {
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = leafText(expectAt(c, 0, '', 'clientSoftwareKennung'), 'clientSoftwareKennung');
  const payload = expectAt(c, 1, '', payloadName);
  expectEnd(c, 2);
  try {
    return { clientSoftwareId, ...read(payload, wrapper.ns) };
  } catch (error) {
    return rethrowWithin(payloadName, error);
  }
}

type OptionalRequest<K extends string, T> = { clientSoftwareId?: string } & { [F in K]?: T };

/**
 * A v2-only request wrapper whose unqualified children are both optional: `clientSoftwareKennung`, then
 * `payloadName`, which `read` turns into the request's `field` (its failures prefixed with `payloadName`).
 */
export function readOptionalRequest<K extends string, T>(
  wrapper: XmlElement,
  payloadName: string,
  field: K,
  read: (payload: XmlElement, ns: string) => T,
): OptionalRequest<K, T> {
  checkAttributes(wrapper, NONE);
  checkNoText(wrapper);
  const c = wrapper.children;
  let i = 0;
  let clientSoftwareId: string | undefined;
  if (isAt(c, i, '', 'clientSoftwareKennung')) clientSoftwareId = leafText(c[i++]!, 'clientSoftwareKennung');
  const payload = isAt(c, i, '', payloadName) ? c[i++] : undefined;
  expectEnd(c, i);
  if (payload === undefined) return { clientSoftwareId } as OptionalRequest<K, T>;
  try {
    return { clientSoftwareId, [field]: read(payload, wrapper.ns) } as OptionalRequest<K, T>;
  } catch (error) {
    return rethrowWithin(payloadName, error);
  }
}

/**
 * The optional unqualified `return` of a v2-only response wrapper, which `read` turns into the
 * response's `field` (its failures prefixed with `return`); `{}` without it.
 */
export function readOptionalReturn<K extends string, T>(
  wrapper: XmlElement,
  field: K,
  read: (ret: XmlElement, ns: string) => T,
): { [F in K]?: T } {
  checkAttributes(wrapper, NONE);
  checkNoText(wrapper);
  const c = wrapper.children;
  const ret = isAt(c, 0, '', 'return') ? c[0] : undefined;
  // A `return` in a namespace is named as such rather than as an unexpected element.
  if (ret === undefined && c[0]?.local === 'return') expectAt(c, 0, '', 'return');
  expectEnd(c, ret === undefined ? 0 : 1);
  if (ret === undefined) return {};
  try {
    return { [field]: read(ret, wrapper.ns) } as { [F in K]?: T };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

/** `<clientSoftwareKennung>` when present. */
export function writeOptionalClientSoftwareId(id: string | undefined): string {
  return id === undefined ? '' : `<clientSoftwareKennung>${escapeText(id)}</clientSoftwareKennung>`;
}

const NONE: readonly string[] = [];

function clip(v: string): string {
  return v.length > 40 ? `${v.slice(0, 40)}…` : v;
}
