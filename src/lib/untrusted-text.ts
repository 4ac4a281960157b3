/**
 * Text from outside (a wholesaler's fault texts, the start of its error page) made safe to show: our
 * error bodies end up in terminals, log viewers and web pages, so nothing in them may be interpreted by
 * one of those. Removed: ANSI escape sequences (CSI such as colours and cursor moves, OSC such as window
 * titles and hyperlinks, and the other string and two-character sequences), every remaining C0 and C1
 * control character and DEL, the bidirectional formatting characters (overrides, embeddings, isolates
 * and marks, which can make text read differently from what it is), and markup (`<script>…</script>` and
 * `<style>…</style>` with their content, every other tag, comment or CDATA marker by itself). Whitespace
 * runs become one space; the result is trimmed and at most `maxLength` characters long, ending in `…`
 * when cut. A plain `<` or `>` that is no tag (`Menge < 5`) stays. Applying it twice changes nothing more.
 * Only the first 64 characters per character shown are read (32,000 for the default 500).
 * See docs/resilience.md, "Rough edges handled".
 */

export const UNTRUSTED_TEXT_MAX_LENGTH = 500;

const ESC = '\\u001b';
/** String sequences (OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _`, and their 8-bit forms) up to BEL or ST. */
const ANSI_STRING = new RegExp(
  `(?:${ESC}[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|${ESC}\\\\|\\u009c|$)`,
  'g',
);
/** CSI (`ESC [` or 8-bit U+009B): parameter bytes, intermediate bytes, one final byte. */
const ANSI_CSI = new RegExp(
  `(?:${ESC}\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?`,
  'g',
);
/** Any other escape: ESC, intermediate bytes, one final byte (`ESC c`, `ESC ( B`). */
const ANSI_OTHER = new RegExp(`${ESC}[\\u0020-\\u002f]*[\\u0030-\\u007e]?`, 'g');
/** C0, DEL and C1 controls. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/** Tab, line feed, vertical tab, form feed, carriage return, next line. */
const SEPARATING_CONTROLS = '\t\n\u000b\f\r\u0085';
/** Bidi embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069), marks (LRM, RLM, ALM). */
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
/** The start tag of a script or style element (its end is found by `END_TAG`). */
const SCRIPT_OR_STYLE_START = /<(script|style)\b[^>]*>/gi;
const END_TAG = { script: /<\/script\s*>/gi, style: /<\/style\s*>/gi } as const;
/** What may follow `<` (or `</`) for it to open a tag, comment, declaration or processing instruction. */
const TAG_START = /[A-Za-z!?]/;
const WHITESPACE = /\s+/g;

/**
 * How much of a text is looked at, per character shown: far more than markup and escape sequences
 * take in any real text, so the shown part is the same, while a megabyte-long fault text costs
 * microseconds instead of a tenth of a second of the event loop every tenant shares.
 */
const READ_PER_SHOWN_CHARACTER = 64;

export function sanitizeUntrustedText(text: string, maxLength = UNTRUSTED_TEXT_MAX_LENGTH): string {
  // Escape sequences and controls take no room on a terminal: gone without a trace, except line
  // breaks and tabs, which separate words.
  let clean = readable(text, maxLength * READ_PER_SHOWN_CHARACTER)
    .replace(ANSI_STRING, '')
    .replace(ANSI_CSI, '')
    .replace(ANSI_OTHER, '')
    .replace(CONTROLS, (control) => (SEPARATING_CONTROLS.includes(control) ? ' ' : ''))
    .replace(BIDI, '');
  clean = withoutTags(withoutScriptsAndStyles(clean)).replace(WHITESPACE, ' ').trim();
  return clean.length > maxLength ? cut(clean, maxLength) : clean;
}

/**
 * `<script>…</script>` and `<style>…</style>` elements replaced by a space, in one pass: each end tag is
 * searched from its start tag onwards, and once an end tag is missing no later start tag looks for it
 * again (a lazy regular expression would rescan the rest of the text from every start tag: quadratic).
 */
function withoutScriptsAndStyles(text: string): string {
  let out = '';
  let from = 0;
  const missing = new Set<string>();
  SCRIPT_OR_STYLE_START.lastIndex = 0;
  for (
    let start = SCRIPT_OR_STYLE_START.exec(text);
    start !== null;
    start = SCRIPT_OR_STYLE_START.exec(text)
  ) {
    const kind = start[1]!.toLowerCase() as keyof typeof END_TAG;
    if (missing.has(kind)) continue;
    const end = END_TAG[kind];
    end.lastIndex = SCRIPT_OR_STYLE_START.lastIndex;
    const found = end.exec(text);
    if (found === null) {
      missing.add(kind);
      continue;
    }
    out += `${text.slice(from, start.index)} `;
    from = end.lastIndex;
    SCRIPT_OR_STYLE_START.lastIndex = from;
  }
  return out + text.slice(from);
}

/**
 * Every tag, end tag, comment, CDATA marker, declaration or processing instruction (`<` and an optional
 * `/`, a letter, `!` or `?`, then anything but `<` and `>` up to `>`) replaced by a space, also those that
 * removing another one joins (`<a<b>>`), in one pass: the text is written to `out` while the positions of
 * the `<` that a later `>` could still close are kept on a stack. A `>` closes the latest one if it opens
 * a tag; otherwise it stays, and no earlier `<` can be closed past it.
 */
function withoutTags(text: string): string {
  const out: string[] = [];
  const opens: number[] = [];
  for (const char of text) {
    if (char === '<') {
      opens.push(out.length);
      out.push(char);
    } else if (char === '>' && opens.length > 0 && opensTag(out, opens.at(-1)!)) {
      out.length = opens.pop()!;
      out.push(' ');
      // The space now follows any earlier `<` directly or after its name: `< ` opens no tag, and a
      // name with a space in it still may (`<a >`), so the earlier `<` stay on the stack.
    } else {
      if (char === '>') opens.length = 0;
      out.push(char);
    }
  }
  return out.join('');
}

function opensTag(out: readonly string[], at: number): boolean {
  const next = out[at + 1];
  if (next === '/') return out[at + 2] !== undefined && TAG_START.test(out[at + 2]!);
  return next !== undefined && TAG_START.test(next);
}

/** At most the first `limit` characters of `text`, never ending in half a surrogate pair. */
function readable(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const last = text.charCodeAt(limit - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit);
}

/** The first `maxLength - 1` characters (no surrogate pair split) and `…`. */
function cut(text: string, maxLength: number): string {
  let end = maxLength - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}
