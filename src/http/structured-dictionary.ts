/**
 * A reader for RFC 8941 (Structured Field Values) Dictionaries, enough for `X-MSV3-Credentials`
 * (docs/multi-wholesaler.md "Credentials for several wholesalers"): keys, and as member values Strings,
 * Byte Sequences, Tokens, Integers, Booleans and Inner Lists of them; Parameters are read and dropped, as
 * the RFC lets a recipient ignore parameters it does not know. Decimals are not read (no member uses one).
 *
 * Errors say where (a character position) and what was expected, never the text found there: the header
 * carries passwords, and an error answer must not echo one.
 */

type BareItem =
  | { type: 'string'; value: string }
  | { type: 'bytes'; value: Buffer }
  | { type: 'token'; value: string }
  | { type: 'integer'; value: number }
  | { type: 'boolean'; value: boolean };

export type DictionaryMember = BareItem | { type: 'inner-list'; items: BareItem[] };

export interface DictionaryEntry {
  key: string;
  value: DictionaryMember;
}

export class StructuredFieldError extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
  ) {
    super(`at character ${position + 1}: expected ${expected}`);
  }
}

/**
 * The members in the order they appear; a key that occurs twice appears twice (the RFC keeps the last,
 * but callers that must not guess, like credentials, refuse a repeated key).
 */
export function parseDictionary(text: string): DictionaryEntry[] {
  const reader = new Reader(text);
  reader.skip(' ');
  const entries: DictionaryEntry[] = [];
  if (reader.done()) return entries;
  for (;;) {
    const key = reader.key();
    let value: DictionaryMember;
    if (reader.peek() === '=') {
      reader.next();
      value = reader.peek() === '(' ? reader.innerList() : reader.bareItem();
    } else {
      value = { type: 'boolean', value: true };
    }
    reader.parameters();
    entries.push({ key, value });
    reader.skipOws();
    if (reader.done()) return entries;
    reader.expect(',', '"," between members');
    reader.skipOws();
    if (reader.done()) throw new StructuredFieldError(reader.at, 'a member after ","');
  }
}

const KEY_FIRST = /[a-z*]/;
const KEY_REST = /[a-z0-9_\-.*]/;
const TOKEN_FIRST = /[A-Za-z*]/;
const TOKEN_REST = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

class Reader {
  at = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  peek(): string {
    return this.text[this.at] ?? '';
  }

  next(): string {
    return this.text[this.at++] ?? '';
  }

  expect(char: string, what: string): void {
    if (this.peek() !== char) throw new StructuredFieldError(this.at, what);
    this.at++;
  }

  skip(char: string): void {
    while (this.peek() === char) this.at++;
  }

  skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.at++;
  }

  key(): string {
    const start = this.at;
    if (!KEY_FIRST.test(this.peek())) {
      throw new StructuredFieldError(this.at, 'a key: a lower-case letter or "*" first');
    }
    while (!this.done() && KEY_REST.test(this.peek())) this.at++;
    return this.text.slice(start, this.at);
  }

  innerList(): DictionaryMember {
    this.expect('(', '"("');
    const items: BareItem[] = [];
    for (;;) {
      this.skip(' ');
      if (this.peek() === ')') {
        this.at++;
        return { type: 'inner-list', items };
      }
      if (this.done()) throw new StructuredFieldError(this.at, '")" closing the inner list');
      items.push(this.bareItem());
      this.parameters();
      const after = this.peek();
      if (after !== ' ' && after !== ')') {
        throw new StructuredFieldError(this.at, 'a space or ")" after an inner-list item');
      }
    }
  }

  bareItem(): BareItem {
    const char = this.peek();
    if (char === '"') return this.string();
    if (char === ':') return this.bytes();
    if (char === '?') return this.boolean();
    if (char === '-' || (char >= '0' && char <= '9')) return this.integer();
    if (TOKEN_FIRST.test(char)) return this.token();
    throw new StructuredFieldError(this.at, 'a value: a "string", a :byte sequence:, a token or a number');
  }

  parameters(): void {
    while (this.peek() === ';') {
      this.at++;
      this.skip(' ');
      this.key();
      if (this.peek() === '=') {
        this.at++;
        this.bareItem();
      }
    }
  }

  private string(): BareItem {
    this.at++;
    let value = '';
    for (;;) {
      if (this.done()) throw new StructuredFieldError(this.at, 'a closing quote');
      const char = this.next();
      if (char === '"') return { type: 'string', value };
      if (char === '\\') {
        const escaped = this.next();
        if (escaped !== '"' && escaped !== '\\') {
          throw new StructuredFieldError(this.at - 1, '\\" or \\\\ after a backslash');
        }
        value += escaped;
      } else if (char < ' ' || char > '~') {
        throw new StructuredFieldError(this.at - 1, 'printable ASCII inside a string');
      } else {
        value += char;
      }
    }
  }

  private bytes(): BareItem {
    this.at++;
    const end = this.text.indexOf(':', this.at);
    if (end === -1) throw new StructuredFieldError(this.at, 'a closing ":" of the byte sequence');
    const encoded = this.text.slice(this.at, end);
    if (!BASE64.test(encoded)) throw new StructuredFieldError(this.at, 'base64 inside ":…:"');
    this.at = end + 1;
    return { type: 'bytes', value: Buffer.from(encoded, 'base64') };
  }

  private boolean(): BareItem {
    this.at++;
    const char = this.next();
    if (char !== '0' && char !== '1') throw new StructuredFieldError(this.at - 1, '?0 or ?1');
    return { type: 'boolean', value: char === '1' };
  }

  private integer(): BareItem {
    const start = this.at;
    if (this.peek() === '-') this.at++;
    const digitsFrom = this.at;
    while (this.peek() >= '0' && this.peek() <= '9') this.at++;
    const digits = this.at - digitsFrom;
    if (digits === 0 || digits > 15) throw new StructuredFieldError(start, 'an integer of 1 to 15 digits');
    if (this.peek() === '.') throw new StructuredFieldError(this.at, 'an integer (decimals are not read)');
    return { type: 'integer', value: Number(this.text.slice(start, this.at)) };
  }

  private token(): BareItem {
    const start = this.at;
    this.at++;
    while (!this.done() && TOKEN_REST.test(this.peek())) this.at++;
    return { type: 'token', value: this.text.slice(start, this.at) };
  }
}
