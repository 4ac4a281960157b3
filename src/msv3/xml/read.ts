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

/** `xsi:nil="true"` (or `"1"`), whatever prefix the document bound to the XSI namespace. */
export function isNil(el: XmlElement): boolean {
  if (el.attrs === null) return false;
  const v = el.attrNS(XSI_NS, 'nil');
  return v === 'true' || v === '1';
}
