/**
 * A small, strict, namespace-aware XML parser for SOAP envelopes.
 *
 * Why not a generic parser: MSV3 answers are large (a 50-article availability answer is ~30 KB) and
 * sit on every request's hot path. This parser finds markup with native `indexOf`, touches character by
 * character only the inside of tags, and keeps element text as offsets into the source until a decoder
 * asks for it. It is also safe by construction: a DOCTYPE is refused (so no entity can be declared),
 * only the five XML entities and numeric character references are decoded, the work is linear in the
 * input whatever it holds, and size, depth, element count, attributes per element, names, texts and
 * attribute values are capped (`DEFAULT_LIMITS`). Every problem is reported as an `XmlError`; the
 * caller turns it into a typed decode error (a 502 wholesaler_bad_response for an answer).
 */

export class XmlError extends Error {
  override readonly name = 'XmlError';
}

export interface ParseLimits {
  /** Maximum input length in UTF-16 code units. */
  maxLength: number;
  /** Maximum element nesting depth. */
  maxDepth: number;
  /** Maximum attributes on one element, namespace declarations included. */
  maxAttributes: number;
  /** Maximum length of an element or attribute name, prefix included. */
  maxNameLength: number;
  /** Maximum number of elements in the document. */
  maxElements: number;
  /** Maximum length of one element's text (references decoded). */
  maxTextLength: number;
  /** Maximum length of one attribute value (as written). */
  maxAttributeValueLength: number;
}

/*
 * The caps below are far above anything an MSV3 wholesaler sends, and keep every answer's parse
 * linear and small: a hostile answer (any account may register a custom wholesaler) fails with a
 * decode error naming the cap, in milliseconds per megabyte, instead of blocking the event loop that
 * serves every tenant. docs/resilience.md "Hostile answers".
 */

/**
 * 4 Mi characters: the largest MSV3 answer is a Dokument (at most 2 MiB of PDF, ~2.8 Mi characters of
 * base64); everything else is a few hundred kilobytes at most (a 50-article availability answer is ~30 KB).
 */
const MAX_DOCUMENT_LENGTH = 4 * 1024 * 1024;
/** 64 levels: an MSV3 envelope nests at most ~8 (Envelope/Body/wrapper/return/Artikel/Anteil/leaf). */
export const MAX_DEPTH = 64;
/**
 * 256 attributes, namespace declarations included: an MSV3 element carries at most ~6, and an envelope
 * declares a handful of namespaces (toolkits such as .NET or JAX-WS rarely more than ten).
 */
export const MAX_ATTRIBUTES = 256;
/** 1,024 characters: the longest MSV3 name is ~45 (LieferscheinOderBarcodeUnbekanntFaultInfo plus a prefix). */
export const MAX_NAME_LENGTH = 1024;
/**
 * 65,536 elements: the largest MSV3 answers have ~10,000 (a bulk availability answer of 10,000 PZNs, one
 * `Pzn` each; an order of 1,000 positions), so this leaves six times that. Building an element costs
 * about a microsecond, so an answer refused at this cap holds the event loop for tens of milliseconds
 * at most (four times this cap took up to 250 ms on a loaded 2-core machine), and one parse's memory
 * (~100 bytes per element) stays under ~7 MB.
 */
export const MAX_ELEMENTS = 65_536;
/**
 * 3 Mi characters: the longest MSV3 text is a Dokument's base64 data, at most 2 MiB of PDF, which is
 * 2,796,204 characters (~2.87 Mi with a line break every 76); every other text is at most a few hundred.
 */
export const MAX_TEXT_LENGTH = 3 * 1024 * 1024;
/** 64 Ki characters: MSV3 attribute values are ids, uuids, kinds and namespace URIs, under 100 characters. */
export const MAX_ATTRIBUTE_VALUE_LENGTH = 64 * 1024;

export const DEFAULT_LIMITS: ParseLimits = {
  maxLength: MAX_DOCUMENT_LENGTH,
  maxDepth: MAX_DEPTH,
  maxAttributes: MAX_ATTRIBUTES,
  maxNameLength: MAX_NAME_LENGTH,
  maxElements: MAX_ELEMENTS,
  maxTextLength: MAX_TEXT_LENGTH,
  maxAttributeValueLength: MAX_ATTRIBUTE_VALUE_LENGTH,
};

/** A name as shown in an error message: an answer's content is never echoed at length. */
function shown(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name;
}

/** The duplicate-attribute check compares in a loop up to this many attributes, then uses a Set. */
const FEW_ATTRIBUTES = 8;

export const XML_NS = 'http://www.w3.org/XML/1998/namespace';
// Shared by every leaf element; never mutated (addChild replaces it).
const NO_CHILDREN: XmlElement[] = [];

/**
 * Names seen before, shared across documents (names only, bounded, overwritten on collision). A start
 * tag whose name is in the memo is recognised with one native slice-and-compare instead of a
 * character loop, and its local name is an internalized string, so decoders comparing
 * `el.local === 'Menge'` hit V8's pointer-equality fast path.
 */
const NAME_SLOTS = 512;
const MAX_MEMO_NAME = 48;
const MEMO_QNAME: string[] = new Array<string>(NAME_SLOTS).fill('');
const MEMO_LOCAL: string[] = new Array<string>(NAME_SLOTS).fill('');
const MEMO_COLON: number[] = new Array<number>(NAME_SLOTS).fill(-1);
/** The prefix of each remembered name ('' when it has none), internalized like the local name. */
const MEMO_PREFIX: string[] = new Array<string>(NAME_SLOTS).fill('');

/**
 * The slots of the last names that came right after each remembered name, most recent first (-1:
 * none yet): from `followsSibling(slot)` on its next siblings, from `followsChild(slot)` on its first
 * children. MSV3 answers repeat the same few sequences, so the next start tag is nearly always a
 * predicted one, and then it is recognised with a compare instead of a search for its end and a hash.
 * A wrong prediction only costs the compares.
 */
const WAYS = 4;
const FOLLOWS = new Int16Array(2 * WAYS * NAME_SLOTS).fill(-1);

function followsSibling(slot: number): number {
  return slot === -1 ? -1 : 2 * WAYS * slot;
}

function followsChild(slot: number): number {
  return slot === -1 ? -1 : 2 * WAYS * slot + WAYS;
}

/** Makes `slot` the most recent name at `follows`, `k` its current place there (WAYS - 1 if absent). */
function moveToFront(follows: number, k: number, slot: number): void {
  for (let j = follows + k; j > follows; j--) FOLLOWS[j] = FOLLOWS[j - 1]!;
  FOLLOWS[follows] = slot;
}

function nameSlot(src: string, start: number, end: number): number {
  const length = end - start;
  const hash =
    length * 131 +
    src.charCodeAt(start + (length >> 1)) * 31 +
    src.charCodeAt(end - 2) * 7 +
    src.charCodeAt(end - 1);
  return (hash ^ (hash >>> 9)) & (NAME_SLOTS - 1);
}

function matchesMemo(src: string, start: number, end: number, slot: number): boolean {
  const memo = MEMO_QNAME[slot]!;
  return memo.length === end - start && holdsAt(src, start, memo);
}

/** The memo slot holding the name `src[start, end)`, or -1. */
function memoFind(src: string, start: number, end: number): number {
  if (end <= start || end - start > MAX_MEMO_NAME) return -1;
  const slot = nameSlot(src, start, end);
  if (matchesMemo(src, start, end, slot)) return slot;
  if (matchesMemo(src, start, end, slot ^ 1)) return slot ^ 1;
  return -1;
}

/**
 * Remembers a name not found by `memoFind` (one that passed the start-tag checks) in an empty slot
 * of its pair, else in place of the pair's second entry, so the memo never goes stale. Returns the
 * slot, or -1 for names too long to remember.
 */
function memoStore(src: string, start: number, end: number): number {
  if (end <= start || end - start > MAX_MEMO_NAME) return -1;
  const slot = nameSlot(src, start, end);
  const at = MEMO_QNAME[slot] === '' ? slot : slot ^ 1;
  // Internalized copies: a plain slice of 13+ characters would keep the whole document alive.
  const qname = internalize(src.slice(start, end));
  const colon = qname.indexOf(':');
  MEMO_QNAME[at] = qname;
  MEMO_LOCAL[at] = internalize(colon === -1 ? qname : qname.slice(colon + 1));
  MEMO_COLON[at] = colon;
  MEMO_PREFIX[at] = colon === -1 ? '' : internalize(qname.slice(0, colon));
  return at;
}

/**
 * Whether `src` holds `s` at `at`, compared natively without scanning further. A slice shorter than
 * 13 characters is a flat copy that compares fast; a longer one would be a sliced string, which V8
 * compares in its runtime, so those are compared in place with `endsWith`.
 */
export function holdsAt(src: string, at: number, s: string): boolean {
  const end = at + s.length;
  return s.length < 13 ? src.slice(at, end) === s : end <= src.length && src.endsWith(s, end);
}

/** The internalized copy of a string (V8 internalizes property keys). */
export function internalize(s: string): string {
  const holder: Record<string, number> = Object.create(null);
  holder[s] = 0;
  return Object.keys(holder)[0] ?? s;
}

/**
 * Prefix → namespace URI bindings in scope; a new scope is made only where an element declares xmlns.
 * `resolve` walks up the declaring ancestors, at most `maxDepth` of them: decoders use it on the few
 * prefixed attributes of elements they know. The parser itself resolves names in one lookup (`bound`).
 */
class Scope {
  constructor(
    readonly parent: Scope | null,
    readonly bindings: Map<string, string>,
    /** Bindings the document did not declare, assumed for a tolerated deviation (`assumePrefix`). */
    readonly assumed = false,
  ) {}

  resolve(prefix: string): string | undefined {
    for (let s: Scope | null = this; s !== null; s = s.parent) {
      const uri = s.bindings.get(prefix);
      if (uri !== undefined) return uri;
    }
    return undefined;
  }

  /** `resolve`, counting only what the document itself declares (no assumed binding). */
  resolveDeclared(prefix: string): string | undefined {
    for (let s: Scope | null = this; s !== null; s = s.parent) {
      const uri = s.assumed ? undefined : s.bindings.get(prefix);
      if (uri !== undefined) return uri;
    }
    return undefined;
  }
}

const ROOT_SCOPE = new Scope(null, new Map([['xml', XML_NS]]));

export class XmlElement {
  /** Namespace URI ('' when unqualified). */
  ns: string;
  /** Local name (without prefix). */
  local: string;
  /** Alternating raw attribute names and decoded values, or null when the element has none. */
  attrs: string[] | null;
  children: XmlElement[];
  /** Replaced only by `assumePrefix`. */
  scope: Scope;
  /** The name as written, with its prefix (shared between elements of the same name). */
  readonly rawName: string;
  private readonly source: string;
  /** Set for text that needed more than one slice or decoding (CDATA, comments, references). */
  private textValue: string | null;
  private textStart: number;
  private textEnd: number;

  constructor(
    source: string,
    rawName: string,
    scope: Scope,
    ns: string,
    local: string,
    attrs: string[] | null,
  ) {
    this.ns = ns;
    this.local = local;
    this.attrs = attrs;
    this.children = NO_CHILDREN;
    this.rawName = rawName;
    this.scope = scope;
    this.source = source;
    this.textValue = null;
    this.textStart = 0;
    this.textEnd = 0;
  }

  /** The name as written, with its prefix (for messages). */
  get qname(): string {
    return this.rawName;
  }

  /** The element's text content with entities decoded (empty for elements that only hold children). */
  text(): string {
    if (this.textValue !== null) return this.textValue;
    // The parser keeps only text without '&' as a range (anything else is decoded while parsing).
    return this.textStart < this.textEnd ? this.source.slice(this.textStart, this.textEnd) : '';
  }

  /** The document text, for allocation-free readers working with `plainTextStart`/`plainTextEnd`. */
  get sourceText(): string {
    return this.source;
  }

  /**
   * Where the element's text lies in `sourceText` when it is one plain range (no CDATA, comment or
   * reference inside), or -1; then read it with `text()`.
   */
  get plainTextStart(): number {
    return this.textValue === null ? this.textStart : -1;
  }

  get plainTextEnd(): number {
    return this.textEnd;
  }

  /** Value of an unqualified attribute (MSV3 attributes are all unqualified), or undefined. */
  attr(name: string): string | undefined {
    const a = this.attrs;
    if (a === null) return undefined;
    for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
    return undefined;
  }

  /** Value of a namespace-qualified attribute such as xsi:nil, whatever prefix the document used. */
  attrNS(ns: string, local: string): string | undefined {
    const a = this.attrs;
    if (a === null) return undefined;
    for (let i = 0; i < a.length; i += 2) {
      const name = a[i]!;
      const colon = name.indexOf(':');
      if (colon === -1 || name.slice(colon + 1) !== local) continue;
      if (this.scope.resolve(name.slice(0, colon)) === ns) return a[i + 1];
    }
    return undefined;
  }

  /** First child element with this namespace and local name. */
  child(ns: string, local: string): XmlElement | undefined {
    for (const c of this.children) if (c.local === local && c.ns === ns) return c;
    return undefined;
  }

  /** All child elements with this namespace and local name, in document order. */
  childrenNamed(ns: string, local: string): XmlElement[] {
    const out: XmlElement[] = [];
    for (const c of this.children) if (c.local === local && c.ns === ns) out.push(c);
    return out;
  }

  /**
   * Binds `prefix`, which the document uses here without declaring it, to `uri` for this element
   * (not its children): for a tolerated deviation (docs/msv3.md "Tolerated deviations"). Readers that
   * must not accept it check with `scope.resolveDeclared`.
   */
  assumePrefix(prefix: string, uri: string): void {
    this.scope = new Scope(this.scope, new Map([[prefix, uri]]), true);
  }

  /** @internal used by the parser */
  setTextRange(start: number, end: number): void {
    this.textStart = start;
    this.textEnd = end;
  }

  /** @internal used by the parser: raw character data, entities still encoded. */
  appendRawText(raw: string): void {
    this.textValue = (this.textValue ?? '') + (raw.indexOf('&') === -1 ? raw : decodeEntities(raw));
  }

  /** @internal used by the parser: CDATA content, taken literally. */
  appendLiteralText(text: string): void {
    this.textValue = (this.textValue ?? '') + text;
  }

  /** @internal used by the parser */
  addChild(child: XmlElement): void {
    if (this.children === NO_CHILDREN) this.children = [child];
    else this.children.push(child);
  }

  /** @internal used by the parser: the length of the text kept so far. */
  get textLength(): number {
    return this.textValue !== null ? this.textValue.length : this.textEnd - this.textStart;
  }

  /** @internal used by the parser: the element's text was split by CDATA or comments. */
  get hasComplexText(): boolean {
    return this.textValue !== null;
  }
}

const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the five predefined entities and numeric references; anything else is an error. */
export function decodeEntities(raw: string): string {
  let out = '';
  let pos = 0;
  for (;;) {
    const amp = raw.indexOf('&', pos);
    if (amp === -1) return out + raw.slice(pos);
    const semi = raw.indexOf(';', amp + 1);
    if (semi === -1 || semi - amp > 12) throw new XmlError('unterminated entity reference');
    out += raw.slice(pos, amp);
    const name = raw.slice(amp + 1, semi);
    if (name.charCodeAt(0) === 35 /* # */) {
      const hex = name.charCodeAt(1) === 120; /* x */
      const digits = name.slice(hex ? 2 : 1);
      if (digits.length === 0 || !(hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(digits)) {
        throw new XmlError(`bad character reference &${name};`);
      }
      const code = Number.parseInt(digits, hex ? 16 : 10);
      if (!isXmlChar(code)) throw new XmlError(`character reference &${name}; is not an XML character`);
      out += String.fromCodePoint(code);
    } else {
      const ch = NAMED_ENTITIES[name];
      if (ch === undefined) throw new XmlError(`unknown entity &${name};`);
      out += ch;
    }
    pos = semi + 1;
  }
}

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

function isBlank(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isSpace(s.charCodeAt(i))) return false;
  return true;
}

export interface ParsedTag {
  qname: string;
  /** The name's memo slot, or -1 for a name too long to remember. */
  slot: number;
  attrs: string[] | null;
  declares: Map<string, string> | null;
  selfClosing: boolean;
  /** Index just after the closing '>'. */
  end: number;
}

/**
 * Slow path for start tags with attributes (or odd whitespace): scans character by character.
 * `knownQname` is the element name when the caller has already recognised it (from the name memo).
 */
function parseTagWithAttributes(
  src: string,
  lt: number,
  knownQname: string | null,
  limits: ParseLimits,
): ParsedTag {
  let i = lt + 1;
  const len = src.length;
  let qname: string;
  if (knownQname !== null) {
    qname = knownQname;
    i += qname.length;
  } else {
    for (; i < len; i++) {
      const c = src.charCodeAt(i);
      if (c === 62 || c === 47 || isSpace(c)) break;
      if (c === 60 || c === 34 || c === 39 || c === 61)
        throw new XmlError('invalid character in element name');
    }
    if (i === lt + 1) throw new XmlError('empty element name');
    if (i - lt - 1 > limits.maxNameLength) throw nameTooLong(limits);
    if (i >= len) throw new XmlError('unterminated start tag');
    qname = src.slice(lt + 1, i);
  }

  // Attributes.
  let attrs: string[] | null = null;
  let declares: Map<string, string> | null = null;
  // Attributes and declarations so far (for the cap), and the attribute names once there are many.
  let count = 0;
  let seen: Set<string> | null = null;
  for (;;) {
    while (i < len && isSpace(src.charCodeAt(i))) i++;
    if (i >= len) throw new XmlError('unterminated start tag');
    const c = src.charCodeAt(i);
    if (c === 62) {
      i++;
      break;
    }
    if (c === 47) {
      if (src.charCodeAt(i + 1) !== 62) throw new XmlError(`malformed start tag <${shown(qname)}>`);
      i += 2;
      return { qname, slot: -1, attrs, declares, selfClosing: true, end: i };
    }
    if (++count > limits.maxAttributes) {
      throw new XmlError(
        `more than ${limits.maxAttributes} attributes on element ${shown(qname)} (maxAttributes)`,
      );
    }
    const nameStart = i;
    for (; i < len; i++) {
      const a = src.charCodeAt(i);
      if (a === 61 || a === 62 || a === 47 || isSpace(a)) break;
      if (a === 60 || a === 34 || a === 39) throw new XmlError(`invalid attribute name in <${shown(qname)}>`);
    }
    if (i - nameStart > limits.maxNameLength) throw nameTooLong(limits);
    const name = src.slice(nameStart, i);
    while (i < len && isSpace(src.charCodeAt(i))) i++;
    if (src.charCodeAt(i) !== 61 || name.length === 0)
      throw new XmlError(`malformed attribute in <${shown(qname)}>`);
    i++;
    while (i < len && isSpace(src.charCodeAt(i))) i++;
    const quote = src.charCodeAt(i);
    if (quote !== 34 && quote !== 39)
      throw new XmlError(`unquoted attribute ${shown(name)} in <${shown(qname)}>`);
    const close = src.indexOf(quote === 34 ? '"' : "'", i + 1);
    if (close === -1) throw new XmlError(`unterminated attribute ${shown(name)} in <${shown(qname)}>`);
    if (close - i - 1 > limits.maxAttributeValueLength) {
      throw new XmlError(
        `attribute ${shown(name)} of element ${shown(qname)} is longer than ${limits.maxAttributeValueLength} characters (maxAttributeValueLength)`,
      );
    }
    let value = src.slice(i + 1, close);
    if (value.indexOf('<') !== -1) throw new XmlError(`'<' in attribute ${shown(name)} of <${shown(qname)}>`);
    if (value.indexOf('&') !== -1) value = decodeEntities(value);
    i = close + 1;
    if (name === 'xmlns' || name.startsWith('xmlns:')) {
      declares ??= new Map();
      declares.set(name.length === 5 ? '' : name.slice(6), value);
      continue;
    }
    // A loop for the few attributes of real elements, a Set beyond (linear for any count).
    if (attrs === null) attrs = [];
    else if (seen !== null) {
      if (seen.has(name)) throw duplicateAttribute(name, qname);
      seen.add(name);
    } else {
      for (let k = 0; k < attrs.length; k += 2) {
        if (attrs[k] === name) throw duplicateAttribute(name, qname);
      }
      if (attrs.length >= 2 * FEW_ATTRIBUTES) {
        seen = new Set([name]);
        for (let k = 0; k < attrs.length; k += 2) seen.add(attrs[k]!);
      }
    }
    attrs.push(name, value);
  }

  return { qname, slot: -1, attrs, declares, selfClosing: false, end: i };
}

function nameTooLong(limits: ParseLimits): XmlError {
  return new XmlError(`a name is longer than ${limits.maxNameLength} characters (maxNameLength)`);
}

function duplicateAttribute(name: string, qname: string): XmlError {
  return new XmlError(`duplicate attribute ${shown(name)} in <${shown(qname)}>`);
}

const NOT_THERE = -1;
const ATTRIBUTES_FOLLOW = -2;

/**
 * Where a start tag `<qname>` or `<qname/>` whose name begins at `at` ends (just after its '>');
 * ATTRIBUTES_FOLLOW when the name is there and whitespace follows it; NOT_THERE otherwise.
 */
function endOfKnownTag(src: string, at: number, qname: string): number {
  const nameEnd = at + qname.length;
  const c = src.charCodeAt(nameEnd);
  // The character after the name first: it rules out most other names without a compare.
  const end =
    c === 62 ? nameEnd + 1 : c === 47 && src.charCodeAt(nameEnd + 1) === 62 ? nameEnd + 2 : NOT_THERE;
  if (end === NOT_THERE && !isSpace(c)) return NOT_THERE;
  if (!holdsAt(src, at, qname)) return NOT_THERE;
  return end === NOT_THERE ? ATTRIBUTES_FOLLOW : end;
}

/**
 * `endOfKnownTag` for the first of the names predicted at `follows` that is there, which becomes
 * the most recent one (so it is then `FOLLOWS[follows]`); NOT_THERE when none is.
 */
function endOfPredictedTag(src: string, at: number, follows: number): number {
  for (let k = 0; k < WAYS; k++) {
    const slot = FOLLOWS[follows + k]!;
    if (slot === -1) break;
    const end = endOfKnownTag(src, at, MEMO_QNAME[slot]!);
    if (end !== NOT_THERE) {
      if (k > 0) moveToFront(follows, k, slot);
      return end;
    }
  }
  return NOT_THERE;
}

/** A start tag with attributes whose name is the one in memo `slot`. */
function knownTagWithAttributes(src: string, lt: number, slot: number, limits: ParseLimits): ParsedTag {
  // Checked first, as in `readStartTag`, so that a broken tag fails with the same message.
  if (src.indexOf('>', lt + 1) === -1) throw new XmlError('unterminated start tag');
  const tag = parseTagWithAttributes(src, lt, MEMO_QNAME[slot]!, limits);
  tag.slot = slot;
  return tag;
}

/**
 * Any start tag. Without whitespace inside the tag there are no attributes, so the name is all of it
 * and usually a remembered one; otherwise the tag is read by `parseTagWithAttributes`. Also used by
 * the plain-shape readers (`plain.ts`), so that they read a tag exactly as `parseXml` does.
 * @throws XmlError as `parseXml` would for this tag
 */
export function readStartTag(src: string, lt: number, limits: ParseLimits = DEFAULT_LIMITS): ParsedTag {
  const nameStart = lt + 1;
  const gt = src.indexOf('>', nameStart);
  if (gt === -1) throw new XmlError('unterminated start tag');
  const selfClosing = src.charCodeAt(gt - 1) === 47;
  const nameEnd = selfClosing ? gt - 1 : gt;
  let slot = memoFind(src, nameStart, nameEnd);
  if (slot !== -1)
    return { qname: MEMO_QNAME[slot]!, slot, attrs: null, declares: null, selfClosing, end: gt + 1 };
  let stop = nameStart;
  while (stop < nameEnd) {
    const c = src.charCodeAt(stop);
    if (c <= 32 || c === 47) break;
    stop++;
  }
  if (stop === nameEnd && nameEnd > nameStart) {
    if (nameEnd - nameStart > limits.maxNameLength) throw nameTooLong(limits);
    slot = memoStore(src, nameStart, nameEnd);
    const qname = slot === -1 ? src.slice(nameStart, nameEnd) : MEMO_QNAME[slot]!;
    return { qname, slot, attrs: null, declares: null, selfClosing, end: gt + 1 };
  }
  // Attributes follow the name (or the tag is odd): the name usually is a known one.
  const known = isSpace(src.charCodeAt(stop)) ? memoFind(src, nameStart, stop) : -1;
  const tag = parseTagWithAttributes(src, lt, known === -1 ? null : MEMO_QNAME[known]!, limits);
  const end = nameStart + tag.qname.length;
  tag.slot = known !== -1 ? known : memoFind(src, nameStart, end);
  if (tag.slot === -1) tag.slot = memoStore(src, nameStart, end);
  if (tag.slot !== -1) tag.qname = MEMO_QNAME[tag.slot]!;
  return tag;
}

/** The URI bound to `prefix` by the open elements (`bound`: prefix → URIs, innermost last). */
function lookup(bound: Map<string, string[]>, prefix: string): string | undefined {
  const uris = bound.get(prefix);
  return uris === undefined || uris.length === 0 ? undefined : uris[uris.length - 1];
}

/**
 * Namespaces in XML §6.3: no two attributes of an element may have the same namespace and local name,
 * as with two prefixes bound to one URI (`a:x` and `b:x`). Same raw names are refused while the tag
 * is read; an undeclared attribute prefix is left to the decoders, as it always was.
 */
function checkExpandedNames(
  attrs: string[],
  declares: Map<string, string> | null,
  bound: Map<string, string[]>,
  qname: string,
): void {
  // Raw names are distinct already, so expanded names can repeat only where two prefixes of the
  // element's attributes name one namespace: look at each prefix once, and at every name only then.
  let prefixed = 0;
  const uriOf = new Map<string, string | undefined>();
  for (let k = 0; k < attrs.length; k += 2) {
    const name = attrs[k]!;
    const colon = name.indexOf(':');
    if (colon === -1) continue;
    prefixed++;
    const prefix = name.slice(0, colon);
    if (!uriOf.has(prefix)) uriOf.set(prefix, declares?.get(prefix) ?? lookup(bound, prefix));
  }
  if (prefixed < 2 || !namesOneNamespaceTwice(uriOf)) return;
  const seen = new Set<string>();
  for (let k = 0; k < attrs.length; k += 2) {
    const name = attrs[k]!;
    const colon = name.indexOf(':');
    if (colon === -1) continue;
    const prefix = name.slice(0, colon);
    const uri = declares?.get(prefix) ?? lookup(bound, prefix);
    if (uri === undefined) continue;
    // The URI's length first, so that no URI and local name can run into another pair.
    const key = `${uri.length}:${uri}:${name.slice(colon + 1)}`;
    if (seen.has(key)) {
      throw new XmlError(`duplicate attribute ${shown(name)} in <${shown(qname)}> (same namespace and name)`);
    }
    seen.add(key);
  }
}

/** Whether two of the prefixes are bound to the same namespace URI (undeclared ones left aside). */
function namesOneNamespaceTwice(uriOf: Map<string, string | undefined>): boolean {
  if (uriOf.size < 2) return false;
  const uris = new Set<string>();
  for (const uri of uriOf.values()) {
    if (uri === undefined) continue;
    if (uris.has(uri)) return true;
    uris.add(uri);
  }
  return false;
}

/**
 * Parses one XML document and returns its root element. `limits` defaults to `DEFAULT_LIMITS`, field
 * by field. Linear in the length of `src` whatever it holds.
 * @throws XmlError for anything that is not well-formed, a DOCTYPE, an unknown entity, or a limit breach.
 */
export function parseXml(src: string, limits: Partial<ParseLimits> = DEFAULT_LIMITS): XmlElement {
  const lim: ParseLimits = limits === DEFAULT_LIMITS ? DEFAULT_LIMITS : { ...DEFAULT_LIMITS, ...limits };
  if (src.length > lim.maxLength) {
    throw new XmlError(
      `document of ${src.length} characters exceeds the limit of ${lim.maxLength} (maxLength)`,
    );
  }
  const { maxDepth, maxElements, maxTextLength } = lim;
  const stack: XmlElement[] = [];
  let current: XmlElement | null = null;
  let root: XmlElement | null = null;
  let pos = src.charCodeAt(0) === 0xfeff ? 1 : 0;
  let textStart = pos;
  let elements = 0;
  // The memo slots of the open elements, and where in FOLLOWS the next start tag is predicted.
  const slots: number[] = [];
  let follows = -1;
  // Prefix → the URIs the open elements bind it to, innermost last, and per open element its
  // declarations (to unbind at its end tag): a prefix resolves in one lookup at any depth.
  const bound = new Map<string, string[]>([['xml', [XML_NS]]]);
  const declaredBy: (Map<string, string> | null)[] = [];
  // Counts changes of `bound`, so that the cached namespace below knows when it is stale.
  let boundVersion = 0;
  // The namespace of the last element's prefix, reused while the prefix and bindings stay the same.
  let cachedPrefix = '';
  let cachedVersion = -1;
  let cachedUri = '';
  // Position of the next '&' at or after the current text (found once, reused: linear overall).
  let nextAmpersand = -1;

  // Where the next '<' is when the leaf fast path below already found it (-1: search from pos).
  let foundLt = -1;

  for (;;) {
    const lt = foundLt === -1 ? src.indexOf('<', pos) : foundLt;
    foundLt = -1;
    if (lt === -1) {
      if (current !== null) throw new XmlError(`element <${shown(current.qname)}> is not closed`);
      if (!isBlank(src, pos, src.length)) throw new XmlError('text after the root element');
      break;
    }
    if (current === null && lt > pos && !isBlank(src, pos, lt))
      throw new XmlError('text outside the root element');
    const next = src.charCodeAt(lt + 1);

    if (next === 47 /* / */) {
      if (current === null) throw new XmlError('closing tag without an open element');
      const nameLength = current.rawName.length;
      if (!holdsAt(src, lt + 2, current.rawName)) {
        throw new XmlError(`expected </${shown(current.qname)}>`);
      }
      let gt = lt + 2 + nameLength;
      if (src.charCodeAt(gt) !== 62 /* > */) {
        while (isSpace(src.charCodeAt(gt))) gt++;
        if (src.charCodeAt(gt) !== 62) throw new XmlError(`expected </${shown(current.qname)}>`);
      }
      // Text is kept only for leaves; whitespace (or anything else) between child elements is ignored.
      // Text with '&' is decoded now, so a bad reference fails the parse; other text stays a lazy range.
      if (current.children.length === 0) {
        if (nextAmpersand < textStart) {
          const at = src.indexOf('&', textStart);
          nextAmpersand = at === -1 ? src.length : at;
        }
        if (current.hasComplexText || nextAmpersand < lt) current.appendRawText(src.slice(textStart, lt));
        else current.setTextRange(textStart, lt);
        if (current.textLength > maxTextLength) throw textTooLong(current.qname, maxTextLength);
      }
      stack.pop();
      const declared = declaredBy.pop();
      if (declared !== null && declared !== undefined) {
        for (const prefix of declared.keys()) bound.get(prefix)!.pop();
        boundVersion++;
      }
      const closed = slots.pop()!;
      follows = followsSibling(closed);
      current = stack.length > 0 ? stack[stack.length - 1]! : null;
      pos = gt + 1;
      textStart = pos;
      continue;
    }

    if (next === 33 /* ! */) {
      if (src.startsWith('<!--', lt)) {
        const end = src.indexOf('-->', lt + 4);
        if (end === -1) throw new XmlError('unterminated comment');
        if (current !== null && current.children.length === 0)
          current.appendRawText(src.slice(textStart, lt));
        pos = end + 3;
        textStart = pos;
        continue;
      }
      if (src.startsWith('<![CDATA[', lt)) {
        if (current === null) throw new XmlError('CDATA outside the root element');
        const end = src.indexOf(']]>', lt + 9);
        if (end === -1) throw new XmlError('unterminated CDATA section');
        current.appendRawText(src.slice(textStart, lt));
        current.appendLiteralText(src.slice(lt + 9, end));
        pos = end + 3;
        textStart = pos;
        continue;
      }
      if (src.startsWith('<!DOCTYPE', lt)) throw new XmlError('DOCTYPE is not allowed in SOAP messages');
      throw new XmlError('unsupported markup declaration');
    }

    if (next === 63 /* ? */) {
      const end = src.indexOf('?>', lt + 2);
      if (end === -1) throw new XmlError('unterminated processing instruction');
      pos = end + 2;
      if (current !== null && current.children.length === 0) current.appendRawText(src.slice(textStart, lt));
      textStart = pos;
      continue;
    }

    // Start tag: usually the predicted name, closed right after it.
    if (root !== null && current === null) throw new XmlError('more than one root element');
    if (++elements > maxElements) throw new XmlError(`more than ${maxElements} elements (maxElements)`);
    let end = follows === -1 ? NOT_THERE : endOfPredictedTag(src, lt + 1, follows);
    let slot = end === NOT_THERE ? -1 : FOLLOWS[follows]!;
    let selfClosing = end > 0 && src.charCodeAt(end - 2) === 47;
    let attrs: string[] | null = null;
    let declares: Map<string, string> | null = null;
    let rawName: string;
    if (end > 0) rawName = MEMO_QNAME[slot]!;
    else {
      const tag =
        end === ATTRIBUTES_FOLLOW ? knownTagWithAttributes(src, lt, slot, lim) : readStartTag(src, lt, lim);
      if (follows !== -1 && tag.slot !== slot) moveToFront(follows, WAYS - 1, tag.slot);
      slot = tag.slot;
      end = tag.end;
      selfClosing = tag.selfClosing;
      attrs = tag.attrs;
      declares = tag.declares;
      rawName = tag.qname;
    }
    follows = selfClosing ? followsSibling(slot) : followsChild(slot);
    let local: string;
    let prefix: string;
    let colon: number;
    if (slot === -1) {
      colon = rawName.indexOf(':');
      local = colon === -1 ? rawName : rawName.slice(colon + 1);
      prefix = colon === -1 ? '' : rawName.slice(0, colon);
    } else {
      local = MEMO_LOCAL[slot]!;
      prefix = MEMO_PREFIX[slot]!;
      colon = MEMO_COLON[slot]!;
    }
    const parentScope = current === null ? ROOT_SCOPE : current.scope;
    const scope = declares === null ? parentScope : new Scope(parentScope, declares);
    let ns: string;
    if (declares === null && prefix === cachedPrefix && boundVersion === cachedVersion) {
      ns = cachedUri;
    } else {
      const uri = declares?.get(prefix) ?? lookup(bound, prefix);
      if (uri === undefined && colon !== -1) throw undeclaredPrefix(prefix, stack, rawName);
      ns = uri ?? '';
      if (declares === null) {
        cachedPrefix = prefix;
        cachedVersion = boundVersion;
        cachedUri = ns;
      }
    }
    if (attrs !== null && attrs.length >= 4) checkExpandedNames(attrs, declares, bound, rawName);
    const el = new XmlElement(src, rawName, scope, ns, local, attrs);

    if (current === null) root = el;
    else current.addChild(el);
    if (!selfClosing) {
      if (stack.length >= maxDepth) throw new XmlError(`nesting deeper than ${maxDepth} levels (maxDepth)`);
      // A leaf: plain text (no markup, no '&') and then its own end tag `</name>`, read at once. Any
      // other content (children, comments, CDATA, references, a mismatched or spaced end tag) goes
      // the general way below, from the '<' found here.
      const lt2 = src.indexOf('<', end);
      if (lt2 !== -1 && src.charCodeAt(lt2 + 1) === 47) {
        const gt = lt2 + 2 + rawName.length;
        if (src.charCodeAt(gt) === 62 && holdsAt(src, lt2 + 2, rawName)) {
          if (nextAmpersand < end) {
            const at = src.indexOf('&', end);
            nextAmpersand = at === -1 ? src.length : at;
          }
          if (nextAmpersand > lt2) {
            if (lt2 - end > maxTextLength) throw textTooLong(rawName, maxTextLength);
            el.setTextRange(end, lt2);
            follows = followsSibling(slot);
            pos = gt + 1;
            textStart = pos;
            continue;
          }
        }
      }
      foundLt = lt2;
      stack.push(el);
      slots.push(slot);
      declaredBy.push(declares);
      if (declares !== null) {
        for (const [declared, uri] of declares) {
          const uris = bound.get(declared);
          if (uris === undefined) bound.set(declared, [uri]);
          else uris.push(uri);
        }
        boundVersion++;
      }
      current = el;
    }
    pos = end;
    textStart = end;
  }

  if (root === null) throw new XmlError('no root element');
  return root;
}

/** Names the element and where it is: the open elements' names down to it. */
function undeclaredPrefix(prefix: string, open: XmlElement[], qname: string): XmlError {
  const path = open.length > 8 ? ['…', ...open.slice(-7)] : open;
  const at = [...path.map((el) => (typeof el === 'string' ? el : shown(el.qname))), shown(qname)].join('/');
  return new XmlError(
    `undeclared namespace prefix ${shown(prefix)}: <${shown(qname)}> at ${at} uses it, but no xmlns:${shown(prefix)} is in scope`,
  );
}

function textTooLong(qname: string, max: number): XmlError {
  return new XmlError(`text of element ${shown(qname)} is longer than ${max} characters (maxTextLength)`);
}
