/**
 * Where JSON text goes wrong, for the `malformed_json` message (docs/errors.md): Node's `JSON.parse`
 * names a position for some mistakes only ("Unexpected token '}', … is not valid JSON" has none), so the
 * text is scanned here, by the grammar of RFC 8259, without recursion (any nesting depth is fine).
 */

/** The offset (UTF-16 units) of the first character that cannot continue the JSON text; `text.length`
 * when it ends too early; undefined when the text is valid JSON. */
export function firstJsonError(text: string): number | undefined {
  const n = text.length;
  const stack: string[] = [];
  let i = 0;
  let mode: 'value' | 'after' = 'value';

  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  /** Reads `"…": ` at i; the error offset, or undefined with i after the colon. */
  const readKey = (): number | undefined => {
    skipSpace();
    if (text[i] !== '"') return i;
    const bad = readString();
    if (bad !== undefined) return bad;
    skipSpace();
    if (text[i] !== ':') return i;
    i++;
    return undefined;
  };
  const readString = (): number | undefined => {
    i++;
    for (;;) {
      if (i >= n) return n;
      const c = text.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) return i;
      if (c === 0x5c) {
        i++;
        const escaped = text[i];
        if (escaped === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) return Math.min(i + k, n);
          i += 4;
        } else if (escaped === undefined || !'"\\/bfnrt'.includes(escaped)) return Math.min(i, n);
      }
      i++;
    }
    i++;
    return undefined;
  };
  const readDigits = (): boolean => {
    const start = i;
    while (i < n && text[i]! >= '0' && text[i]! <= '9') i++;
    return i > start;
  };
  const readNumber = (): number | undefined => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (!readDigits()) return i;
    if (text[i] === '.') {
      i++;
      if (!readDigits()) return i;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!readDigits()) return i;
    }
    return undefined;
  };

  for (;;) {
    skipSpace();
    if (mode === 'value') {
      if (i >= n) return n;
      const c = text[i]!;
      if (c === '{' || c === '[') {
        stack.push(c);
        i++;
        skipSpace();
        if (text[i] === (c === '{' ? '}' : ']')) {
          stack.pop();
          i++;
          mode = 'after';
          continue;
        }
        if (c === '{') {
          const bad = readKey();
          if (bad !== undefined) return bad;
        }
        continue;
      }
      let bad: number | undefined;
      if (c === '"') bad = readString();
      else if (c === '-' || (c >= '0' && c <= '9')) bad = readNumber();
      else {
        const word = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : undefined;
        if (word === undefined) return i;
        for (const expected of word) {
          if (text[i] !== expected) return Math.min(i, n);
          i++;
        }
      }
      if (bad !== undefined) return bad;
      mode = 'after';
      continue;
    }
    const open = stack.at(-1);
    if (open === undefined) return i < n ? i : undefined;
    if (i >= n) return n;
    if (text[i] === ',') {
      i++;
      if (open === '{') {
        const bad = readKey();
        if (bad !== undefined) return bad;
      }
      mode = 'value';
      continue;
    }
    if (text[i] !== (open === '{' ? '}' : ']')) return i;
    stack.pop();
    i++;
  }
}

/** 1-based line and column of `offset`: lines end at `\n`; columns count UTF-16 units. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * "The request body is not valid JSON: unexpected `}` at line 3, column 5 (character 17)." Shows the
 * one character found there, never more of the body.
 */
export function describeJsonError(text: string): string {
  const offset = firstJsonError(text);
  if (text.trim() === '') return 'The request body is empty; send a JSON object.';
  if (offset === undefined) return 'The request body is not valid JSON.';
  const { line, column } = lineColumn(text, offset);
  const where = `at line ${line}, column ${column} (character ${offset + 1})`;
  if (offset >= text.length) return `The request body is not valid JSON: it ends too early ${where}.`;
  return `The request body is not valid JSON: unexpected ${showCharacter(text, offset)} ${where}.`;
}

function showCharacter(text: string, offset: number): string {
  const code = text.codePointAt(offset)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0)) return `control character ${hex}`;
  if (code === 0x60) return `backtick ${hex}`;
  if (code >= 0xd800 && code <= 0xdfff) return `unpaired surrogate ${hex}`;
  if (code > 0x7e) return `\`${String.fromCodePoint(code)}\` (${hex})`;
  return `\`${String.fromCodePoint(code)}\``;
}
