import { DEFAULT_LIMITS, holdsAt, internalize, type ParsedTag, readStartTag, XML_NS } from './parse.js';
import { XSI_NS } from './read.js';

/**
 * A forward-only reader for the fast paths of typed decoders (their `readResponsePlain` hooks).
 *
 * A fast path reads a document of the one shape its decoder expects, in its plain form: every tag is
 * matched literally (`<m:Menge>`, `</m:Menge>`) at the next '<', leaf text is taken as a source range.
 * Elements read in a fixed order and repeated in every answer (a delivery part, a substitution) are
 * matched as one pattern of such tags (`PlainPattern`), their texts as the pattern's captures.
 * Anything else gives up (`PlainShape.giveUp`): comments, CDATA, processing instructions or any '&'
 * in the document, namespace declarations below the payload wrapper, attributes the fast path does not
 * expect, whitespace inside tags, other prefixes for the same namespace, and every value the decoder
 * would refuse. The caller then runs `parseXml` and the general decoder, which decide: the fast path
 * never produces an error of its own, and it only accepts documents that the general path decodes to
 * the same value (the fast paths' property tests compare the two).
 *
 * What the general path does not look at, the fast path ignores too: text between child elements.
 * Every '<' is read, so no markup is skipped unchecked. The parser's caps (`DEFAULT_LIMITS`) hold here
 * too: a start tag is read by `readStartTag` with them, and the fast path gives up on a text longer
 * than `maxTextLength` and after more tags than `maxElements`, so it never accepts a document that
 * `parseXml` refuses for a cap.
 */
export class PlainShape {
  /** Where reading continues. */
  pos: number;
  /** The namespace bindings in scope for the payload (set by `openPlainEnvelope`). */
  bindings: ReadonlyMap<string, string> = INITIAL_BINDINGS;
  /** The text range of the last leaf read. */
  textStart = 0;
  textEnd = 0;
  /** The position of the next '<' at or after `pos`, once searched (-2: not yet). */
  private nextLt = -2;
  /** Tags read so far: every element read takes at least one, so this bounds the element count. */
  private tags = 0;

  constructor(
    readonly src: string,
    pos: number,
  ) {
    this.pos = pos;
  }

  /** Thrown to give up; caught by `tryPlain`. */
  static readonly GIVE_UP: unique symbol = Symbol('give up the plain shape');

  static giveUp(): never {
    throw PlainShape.GIVE_UP;
  }

  private peek(): number {
    if (this.nextLt === -2) this.nextLt = this.src.indexOf('<', this.pos);
    return this.nextLt;
  }

  private moveTo(pos: number): void {
    if (++this.tags > DEFAULT_LIMITS.maxElements) PlainShape.giveUp();
    this.pos = pos;
    this.nextLt = -2;
  }

  /** Whether the next tag is exactly `tag` (e.g. `<m:Tour>` or `</m:Artikel>`); if so, moves past it. */
  at(tag: string): boolean {
    const lt = this.peek();
    if (lt === -1 || !holdsAt(this.src, lt, tag)) return false;
    this.moveTo(lt + tag.length);
    return true;
  }

  /** Whether the next '<' begins `text` (e.g. `<m:Auftraege `), without moving. */
  nextIs(text: string): boolean {
    const lt = this.peek();
    return lt !== -1 && holdsAt(this.src, lt, text);
  }

  expect(tag: string): void {
    if (!this.at(tag)) PlainShape.giveUp();
  }

  /** The leaf `open` text `close` next: its text is then `textStart`..`textEnd`. */
  leaf(open: string, close: string): void {
    this.expect(open);
    this.leafRest(close);
  }

  /** After a leaf's start tag: its text (no markup, so up to the next '<') and its end tag `close`. */
  leafRest(close: string): void {
    const src = this.src;
    const lt = src.indexOf('<', this.pos);
    if (lt === -1 || !holdsAt(src, lt, close) || lt - this.pos > DEFAULT_LIMITS.maxTextLength)
      PlainShape.giveUp();
    this.textStart = this.pos;
    this.textEnd = lt;
    this.moveTo(lt + close.length);
  }

  /**
   * A nillable leaf: the usual empty form `nil` (`<m:Menge xsi:nil="true"/>`, '' when the document
   * binds no prefix to XSI) gives false, and so does an empty element whose only attribute is
   * `nil="true"` or `"1"` with a prefix bound to XSI there or above (`<m:Menge xsi:nil="true"
   * xmlns:xsi="…"/>`, as JAXB writes it); the leaf `open` text `close` gives true.
   */
  nillableLeaf(open: string, close: string, nil: string): boolean {
    // The character after the name tells the forms apart: '>' for text, ' ' for the empty form.
    const lt = this.peek();
    if (lt !== -1 && this.src.charCodeAt(lt + open.length - 1) === 62) {
      this.leaf(open, close);
      return true;
    }
    if (nil.length !== 0 && this.at(nil)) return false;
    if (!this.nextIs(`${open.slice(0, -1)} `)) PlainShape.giveUp();
    this.checkNilTag(this.startTag());
    return false;
  }

  /**
   * Reads a run of elements with one pattern (`plainPattern`) where reading continues: its captures
   * are the leaves' texts, in the pattern's order. Gives up when it does not match, or on a text
   * longer than `maxTextLength`.
   */
  match(pattern: PlainPattern): RegExpExecArray {
    const m = this.tryMatch(pattern);
    if (m === null) PlainShape.giveUp();
    return m;
  }

  /** `match`, but null without moving when the pattern does not match here. */
  tryMatch(pattern: PlainPattern): RegExpExecArray | null {
    const re = pattern.re;
    re.lastIndex = this.pos;
    const m = re.exec(this.src);
    if (m === null) return null;
    // No capture is longer than the match: only a match longer than the limit has its captures checked.
    if (re.lastIndex - this.pos > DEFAULT_LIMITS.maxTextLength)
      for (let k = 1; k < m.length; k++) {
        const text = m[k];
        if (text !== undefined && text.length > DEFAULT_LIMITS.maxTextLength) PlainShape.giveUp();
      }
    this.tags += pattern.tags - 1;
    this.moveTo(re.lastIndex);
    return m;
  }

  /**
   * An empty form of a nillable leaf that is not the usual `<p:Name xsi:nil="true"/>`: the start tag
   * captured by `plainPattern.nillable`. Gives up unless it is a whole tag, read as `parseXml` reads
   * it, and a nil one (`checkNilTag`); a '>' inside an attribute value ends the capture early, and
   * the tag is then incomplete.
   */
  checkNilText(text: string): void {
    const tag = readStartTag(text, 0);
    if (tag.end !== text.length) PlainShape.giveUp();
    this.checkNilTag(tag);
  }

  /**
   * An empty element whose only attribute is `nil="true"` or `"1"` with a prefix bound to XSI there or
   * above (`<m:Menge xsi:nil="true" xmlns:xsi="…"/>`, as JAXB writes it); gives up on anything else.
   */
  private checkNilTag(tag: ParsedTag): void {
    const a = tag.attrs;
    if (!tag.selfClosing || a === null || a.length !== 2) PlainShape.giveUp();
    const name = a[0]!;
    const colon = name.indexOf(':');
    if (colon === -1 || name.slice(colon + 1) !== 'nil') PlainShape.giveUp();
    const prefix = name.slice(0, colon);
    if (tag.declares !== null) {
      // Only the attribute's prefix may be declared here, to XSI, and not the element's own prefix.
      const own = tag.qname.slice(0, tag.qname.indexOf(':'));
      for (const [declared, uri] of tag.declares)
        if (declared !== prefix || declared === own || uri !== XSI_NS) PlainShape.giveUp();
    }
    const uri = tag.declares?.get(prefix) ?? this.bindings.get(prefix);
    const value = a[1]!;
    if (uri !== XSI_NS || (value !== 'true' && value !== '1')) PlainShape.giveUp();
  }

  /** The next start tag, read as `parseXml` reads it (attributes and declarations included). */
  startTag(): ParsedTag {
    const lt = this.peek();
    if (lt === -1) PlainShape.giveUp();
    const c = this.src.charCodeAt(lt + 1);
    if (c === 47 || c === 33 || c === 63) PlainShape.giveUp();
    const tag = readStartTag(this.src, lt);
    this.moveTo(tag.end);
    return tag;
  }

  /** The rest of the document is whitespace. */
  atEnd(): boolean {
    const src = this.src;
    for (let i = this.pos; i < src.length; i++) {
      const c = src.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 9 && c !== 13) return false;
    }
    return true;
  }
}

/**
 * The literal tags of a list of element names, three per name in the list's order: `<p:Name>`,
 * `</p:Name>` and `<p:Name xsi:nil="true"/>` ('' when the document binds no prefix to XSI). Readers
 * index it with `tagIndex` constants (a flat array of internalized strings reads and compares fast).
 */
export type PlainTags = readonly string[];

/** Where the tags of `local` begin in a `PlainTags` made from `locals`. */
export function tagIndex(locals: readonly string[], local: string): number {
  const k = locals.indexOf(local);
  if (k === -1) throw new RangeError(`no tags for ${local}`);
  return 3 * k;
}

const tagTables = new Map<string, PlainTags>();

/** The `PlainTags` of `locals` for a payload prefix and an XSI prefix, made once per `table` and prefixes. */
export function plainTags(
  table: string,
  locals: readonly string[],
  prefix: string,
  xsiPrefix: string,
): PlainTags {
  const key = `${table} ${prefix} ${xsiPrefix}`;
  const known = tagTables.get(key);
  if (known !== undefined) return known;
  const tags: string[] = [];
  for (const local of locals) {
    tags.push(
      internalize(`<${prefix}:${local}>`),
      internalize(`</${prefix}:${local}>`),
      xsiPrefix === '' ? '' : internalize(`<${prefix}:${local} ${xsiPrefix}:nil="true"/>`),
    );
  }
  if (tagTables.size >= 64) tagTables.clear();
  tagTables.set(key, tags);
  return tags;
}

/**
 * A run of elements read in one step (`PlainShape.match`): a sticky regular expression made of
 * `plainPattern` pieces. Irregexp compares the literal tags in native code in one call per run, where
 * reading them tag by tag took four built-in calls per leaf (docs/performance.md "Elements read as one
 * pattern"). Each piece skips the text before its tag, as `at` does, and every `[^<]*` stops at the
 * next '<', so matching takes time linear in the text read, and no markup is skipped unchecked.
 */
export interface PlainPattern {
  readonly re: RegExp;
  /** The most tags a match spans, counted against `maxElements`. */
  readonly tags: number;
}

/** What every piece begins with: the text before its tag, up to the next '<'. */
const SKIP_TEXT = '[^<]*';

const escapeTag = (tag: string) => tag.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A part of a `PlainPattern`: its source, which begins with `SKIP_TEXT`, and the most tags a match of
 * it spans. `endsWithSkip`: the source also skips the text after it (an optional piece does), so the
 * piece after it leaves out its own `SKIP_TEXT`.
 */
export interface PatternPiece {
  readonly source: string;
  readonly tags: number;
  readonly endsWithSkip?: boolean;
}

/** The source of `piece` without its leading `SKIP_TEXT`. */
const afterSkip = (piece: PatternPiece): string => piece.source.slice(SKIP_TEXT.length);

/** A nillable leaf whose text between the tags is matched by `text`, its empty forms as `nillable` says. */
function nillablePiece(open: string, close: string, nil: string, text: string): PatternPiece {
  const usualNil = nil === '' ? '' : `|${escapeTag(nil)}`;
  return {
    source: `${SKIP_TEXT}(?:${escapeTag(open)}${text}${escapeTag(close)}${usualNil}|(${escapeTag(open.slice(0, -1))} [^<>]*>))`,
    tags: 2,
  };
}

/** Pieces of a `PlainPattern`, from the tags of a `PlainTags` table; `leaf` and `nillable` capture. */
export const plainPattern = {
  /** The tag `tag` next. */
  tag: (tag: string): PatternPiece => ({ source: `${SKIP_TEXT}${escapeTag(tag)}`, tags: 1 }),
  /** The leaf `open` text `close` next; captures its text. */
  leaf: (open: string, close: string): PatternPiece => ({
    source: `${SKIP_TEXT}${escapeTag(open)}([^<]*)${escapeTag(close)}`,
    tags: 2,
  }),
  /**
   * A nillable leaf: two captures, its text (undefined when nil), then, for an empty form other than
   * the usual `nil` (which captures nothing), its start tag up to the first '>', which
   * `PlainShape.checkNilText` must accept. `[^<>]*>` can end at one place only, so a failing match
   * does not try the text after it again for each shorter tag.
   */
  nillable: (open: string, close: string, nil: string): PatternPiece =>
    nillablePiece(open, close, nil, '([^<]*)'),
  /**
   * `nillable` for a leaf whose text is usually of the form `usual` (a source without captures or
   * '<'): three captures, its text when it is of that form, its text when it is not (both undefined
   * when nil), then the other empty form as for `nillable`. The caller checks only the second.
   */
  nillableUsually: (open: string, close: string, nil: string, usual: string): PatternPiece =>
    nillablePiece(open, close, nil, `(?:(${usual})|([^<]*))`),
  /**
   * The piece or nothing, as `[^<]*(?:<a>…[^<]*)?` followed by the next piece without its skip: it
   * matches what `(?:[^<]*<a>…)?[^<]*<b>…` matches, with the same captures, but when the element is
   * absent the text before the next one is skipped once, not given back character by character and
   * skipped again (docs/performance.md "Optional elements"). Every `[^<]*` is still followed by a '<'
   * or a group whose every branch begins with one, which keeps a failing match linear.
   */
  optional: (piece: PatternPiece): PatternPiece => ({
    source: `${SKIP_TEXT}(?:${afterSkip(piece)}${piece.endsWithSkip ? '' : SKIP_TEXT})?`,
    tags: piece.tags,
    endsWithSkip: true,
  }),
  /** Pieces one after the other, as one piece (for `optional`). */
  run: (pieces: readonly PatternPiece[]): PatternPiece => {
    let source = '';
    let skipped = false;
    for (const piece of pieces) {
      source += skipped ? afterSkip(piece) : piece.source;
      skipped = piece.endsWithSkip === true;
    }
    return { source, tags: pieces.reduce((sum, piece) => sum + piece.tags, 0), endsWithSkip: skipped };
  },
};

/** A `PlainPattern` of pieces (`plainPattern`), in order. */
export function compilePattern(pieces: readonly PatternPiece[]): PlainPattern {
  const { source, tags } = plainPattern.run(pieces);
  return { re: new RegExp(source, 'y'), tags };
}

/**
 * `build`'s patterns for a tags table, made the first time the table is seen. The last table and its
 * patterns are kept beside the map: answer after answer comes with the same table, so a lookup is
 * usually one comparison.
 */
export function patternsPerTable<P>(build: (t: PlainTags) => P): (t: PlainTags) => P {
  const made = new WeakMap<PlainTags, P>();
  let lastTable: PlainTags | undefined;
  let last: P | undefined;
  return (t) => {
    if (t !== lastTable) {
      last = made.get(t);
      if (last === undefined) {
        last = build(t);
        made.set(t, last);
      }
      lastTable = t;
    }
    return last as P;
  };
}

/** Runs a fast path; undefined when it gave up (or anything in it threw). */
export function tryPlain<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Prefix → namespace bindings of the plain envelope head (no scope chain: nothing deeper declares). */
export type PlainBindings = Map<string, string>;

/** The name of a tag read by `startTag`, resolved in `bindings`; undefined for an undeclared prefix. */
export function resolveName(
  qname: string,
  bindings: PlainBindings,
): { prefix: string; local: string; ns: string } | undefined {
  const colon = qname.indexOf(':');
  const prefix = colon === -1 ? '' : qname.slice(0, colon);
  const local = colon === -1 ? qname : qname.slice(colon + 1);
  const ns = bindings.get(prefix);
  if (ns === undefined && colon !== -1) return undefined;
  return { prefix, local, ns: ns ?? '' };
}

/** Adds a tag's namespace declarations to a copy of `bindings`. */
export function declare(bindings: PlainBindings, tag: ParsedTag): PlainBindings {
  if (tag.declares === null) return bindings;
  const out = new Map(bindings);
  for (const [prefix, uri] of tag.declares) out.set(prefix, uri);
  return out;
}

/**
 * The prolog, as `parseXml` reads it: a byte order mark, whitespace, processing instructions
 * (`<?xml …?>`) and comments up to the root element's '<'. Gives up on a DOCTYPE, text, an oversized
 * document or any '&' in the document.
 */
export function plainProlog(src: string): PlainShape {
  if (src.length > DEFAULT_LIMITS.maxLength || src.indexOf('&') !== -1) PlainShape.giveUp();
  let pos = src.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    const lt = src.indexOf('<', pos);
    if (lt === -1) PlainShape.giveUp();
    for (let i = pos; i < lt; i++) {
      const c = src.charCodeAt(i);
      if (c !== 32 && c !== 10 && c !== 9 && c !== 13) PlainShape.giveUp();
    }
    const c = src.charCodeAt(lt + 1);
    if (c === 63) {
      const end = src.indexOf('?>', lt + 2);
      if (end === -1) PlainShape.giveUp();
      pos = end + 2;
    } else if (c === 33 && src.startsWith('<!--', lt)) {
      const end = src.indexOf('-->', lt + 4);
      if (end === -1) PlainShape.giveUp();
      pos = end + 3;
    } else return new PlainShape(src, lt);
  }
}

export const INITIAL_BINDINGS: ReadonlyMap<string, string> = new Map([['xml', XML_NS]]);
