import type { XmlElement } from './parse.js';

/**
 * Small strict readers for decoders. They throw `DecodeFailure` with a path such as
 * `return/Artikel[3]/Anteile[1]/Menge`; each operation's decode function catches it at its boundary
 * and returns a typed `invalid` result, so nothing escapes a decoder as an exception.
 */
export class DecodeFailure extends Error {
  override readonly name = 'DecodeFailure';
}

export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';

export function required(parent: XmlElement, ns: string, local: string, path: string): XmlElement {
  const el = parent.child(ns, local);
  if (el === undefined) throw new DecodeFailure(`missing element ${local} in ${path}`);
  return el;
}

export function optional(parent: XmlElement, ns: string, local: string): XmlElement | undefined {
  return parent.child(ns, local);
}

/** `xsi:nil="true"` (or `"1"`), whatever prefix the document bound to the XSI namespace. */
export function isNil(el: XmlElement): boolean {
  if (el.attrs === null) return false;
  const v = el.attrNS(XSI_NS, 'nil');
  return v === 'true' || v === '1';
}

/** Whitespace-collapsed text, as the XSD facets of token-like types (numbers, enums, dates) see it. */
export function token(el: XmlElement): string {
  return el.text().trim();
}

export function requiredText(parent: XmlElement, ns: string, local: string, path: string): string {
  return token(required(parent, ns, local, path));
}

export function optionalText(parent: XmlElement, ns: string, local: string): string | undefined {
  const el = parent.child(ns, local);
  return el === undefined ? undefined : el.text();
}

export function parseInteger(value: string, path: string, min = -Infinity, max = Infinity): number {
  const v = value.trim();
  if (!/^[+-]?[0-9]{1,18}$/.test(v)) throw new DecodeFailure(`${path}: '${truncate(v)}' is not an integer`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new DecodeFailure(`${path}: ${v} is outside ${min}..${max}`);
  }
  return n;
}

export function parseBoolean(value: string, path: string): boolean {
  const v = value.trim();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new DecodeFailure(`${path}: '${truncate(v)}' is not a boolean`);
}

export function parseEnum<T extends string>(value: string, allowed: readonly T[], path: string): T {
  const v = value.trim();
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new DecodeFailure(`${path}: '${truncate(v)}' is not one of ${allowed.join(', ')}`);
}

export function requiredAttr(el: XmlElement, name: string, path: string): string {
  const v = el.attr(name);
  if (v === undefined) throw new DecodeFailure(`missing attribute ${name} on ${path}`);
  return v;
}

export function truncate(value: string, max = 40): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
