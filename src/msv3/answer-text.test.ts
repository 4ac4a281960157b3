import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { listSettings } from '../config.js';
import {
  bodyText,
  decodeAnswer,
  errorSnippet,
  looksLikeSoap,
  MAX_READABLE_ANSWER_BYTES,
  SNIPPET_CHARS,
  scrub,
} from './answer-text.js';
import { DEFAULT_LIMITS } from './xml/parse.js';

const MB = 1024 * 1024;

describe('bodyText', () => {
  const reference = (body: Buffer) => {
    const text = body.toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };

  it('reads any bytes as UTF-8 without a leading byte order mark (ASCII through the Latin-1 copy)', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ maxLength: 300 }).map((a) => a.map((b) => b & 0x7f)),
      fc.string({ unit: 'grapheme', maxLength: 100 }).map((s) => Buffer.from(`\ufeff${s}`, 'utf8')),
    );
    fc.assert(
      fc.property(bytes, (array) => {
        const body = Buffer.from(array);
        expect(bodyText(body)).toBe(reference(body));
      }),
      { numRuns: 3000 },
    );
    expect(bodyText(Buffer.from('<a>Süd</a>', 'utf8'))).toBe('<a>Süd</a>');
    expect(bodyText(Buffer.alloc(0))).toBe('');
  });
});

describe('decodeAnswer', () => {
  const limit = DEFAULT_LIMITS.maxLength;

  it('refuses an answer of more characters than the parser reads without turning it into text', () => {
    const decode = vi.fn(() => ({ kind: 'ok' as const, value: 1 }));
    for (const body of [Buffer.alloc(limit + 1, 't'), Buffer.alloc(3 * limit + 1, 'ä')]) {
      const turnedIntoText = vi.spyOn(body, 'toString');
      expect(decodeAnswer(body, decode)).toEqual({
        kind: 'invalid',
        error: {
          message: `answer of ${body.length} bytes exceeds the limit of ${limit} characters (maxLength)`,
        },
      });
      expect(turnedIntoText).not.toHaveBeenCalled();
    }
    expect(decode).not.toHaveBeenCalled();
    expect(decodeAnswer(Buffer.alloc(limit, 't'), decode)).toEqual({ kind: 'ok', value: 1 });
    // Two bytes a character: 3 Mi characters in 6 MiB, for the parser to read.
    expect(decodeAnswer(Buffer.alloc(limit + limit / 2, 'ä'), decode)).toEqual({ kind: 'ok', value: 1 });
    expect(decode).toHaveBeenCalledTimes(2);
  });

  it('is what the transport reads at most by default: the most bytes of 4 Mi characters', () => {
    expect(MAX_READABLE_ANSWER_BYTES).toBe(12 * MB);
    const setting = listSettings().find((s) => s.env === 'UPSTREAM_MAX_RESPONSE_BYTES');
    expect(setting?.schema.default).toBe(MAX_READABLE_ANSWER_BYTES);
  });

  it('makes a decoder that throws an undecodable answer', () => {
    const decode = () => {
      throw new TypeError('broken');
    };
    expect(decodeAnswer(Buffer.from('<x/>'), decode)).toEqual({
      kind: 'invalid',
      error: { message: 'decoder threw: broken' },
    });
  });
});

describe('looksLikeSoap', () => {
  it('tells an envelope by its content type or its start, past a declaration, comments and a BOM', () => {
    const html = Buffer.from('<html><body>Envelope</body></html>');
    expect(looksLikeSoap('application/soap+xml; charset=utf-8', html)).toBe(true);
    expect(looksLikeSoap('text/html', html)).toBe(false);
    const envelope = `\ufeff<?xml version="1.0"?>\n<!-- ${'ü'.repeat(600)} --><s:Envelope xmlns:s="x">`;
    expect(looksLikeSoap('text/xml', Buffer.from(envelope, 'utf8'))).toBe(true);
    expect(looksLikeSoap(undefined, Buffer.from(`${' '.repeat(2_000)}<Envelope>`))).toBe(false);
  });
});

/**
 * Scrubbing as positions: every occurrence of a secret (the longest first, left to right, as
 * `replaceAll` finds them) covers its characters; each run of covered characters becomes `[redacted]`.
 */
function referenceScrub(text: string, secrets: readonly string[]): string {
  const covered = new Array<boolean>(text.length).fill(false);
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret === '') continue;
    for (let from = 0; ; ) {
      const at = text.indexOf(secret, from);
      if (at === -1) break;
      const free = covered.slice(at, at + secret.length).every((c) => !c);
      if (free) covered.fill(true, at, at + secret.length);
      from = free ? at + secret.length : at + 1;
    }
  }
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!covered[i]) out += text[i];
    else if (i === 0 || !covered[i - 1]) out += '[redacted]';
  }
  return out;
}

describe('scrub', () => {
  it('replaces each run of secrets with [redacted], the longest secret first, and keeps the rest', () => {
    // Characters that the mask would otherwise be, in the text and in secrets.
    const letters = ['a', 'b', 'c', ' ', 'ü', '\u0000', '\ue000'];
    const secret = fc.string({ unit: fc.constantFrom(...letters), minLength: 1, maxLength: 4 });
    const text = fc.string({ unit: fc.constantFrom(...letters), maxLength: 40 });
    fc.assert(
      fc.property(fc.array(secret, { maxLength: 3 }), text, (secrets, original) => {
        expect(scrub(original, secrets)).toBe(referenceScrub(original, secrets));
      }),
      { numRuns: 5000 },
    );
    expect(scrub('user geheim, again geheim', ['geheim'])).toBe('user [redacted], again [redacted]');
    expect(scrub('dXNlcjpnZWhlaW0= geheim', ['geheim', 'dXNlcjpnZWhlaW0='])).toBe('[redacted] [redacted]');
    expect(scrub('price $1', ['1'])).toBe('price $[redacted]');
  });

  it('cuts at `keep` characters of the text itself, never leaving part of a secret', () => {
    expect(scrub('abc geheim xyz', ['geheim'], 6)).toBe('abc [redacted]');
    expect(scrub('abc geheim xyz', ['geheim'], 4)).toBe('abc ');
    expect(scrub('abc geheim', [], 3)).toBe('abc');
  });
});

describe('errorSnippet', () => {
  const collapse = (text: string) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat;
  };

  it('is the whole answer scrubbed and collapsed when it is short', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 600 }),
        fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 2 }),
        (text, secrets) => {
          const body = Buffer.from(text, 'utf8');
          expect(errorSnippet(body, secrets)).toBe(collapse(scrub(bodyText(body), secrets)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('shows a long answer by its start and leaves no part of a secret, wherever the start is cut', () => {
    // Secrets of digits and capitals (Ä two bytes, which the cut may split); the page of other characters,
    // so any of theirs shown is a leak.
    const secret = fc.string({ unit: fc.constantFrom('1', '7', 'X', 'Ä'), minLength: 1, maxLength: 24 });
    const filler = fc.string({ unit: fc.constantFrom('g', 'h', 'ö', ' ', '\n', '\t'), maxLength: 64 });
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 2 }),
        fc.array(filler, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 16 * 1024 - 60, max: 16 * 1024 + 4 }),
        (secrets, pieces, at) => {
          // A run of whitespace up to near the cut, then secrets among the filler across it.
          const start = ' '.repeat(at);
          const rest = pieces.map((piece, i) => `${secrets[i % secrets.length]}${piece}`).join('');
          const snippet = errorSnippet(Buffer.from(`${start}${rest}${'g'.repeat(20_000)}`, 'utf8'), secrets);
          expect(snippet).not.toMatch(/[17XÄ]/);
          expect(snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS + 1);
          expect(snippet.endsWith('…')).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('reads only the start of a 15 MB page', () => {
    const page = Buffer.from(
      `<html>${'geheim at Backend.call(Backend.java:42)\n  '.repeat((15 * MB) / 44)}</html>`,
    );
    // Scrubbing and collapsing the whole page took 1.7 s; the page itself is never turned into text.
    const turnedIntoText = vi.spyOn(page, 'toString');
    const snippet = errorSnippet(page, ['geheim']);
    expect(turnedIntoText).not.toHaveBeenCalled();
    expect(snippet).toMatch(/^<html>\[redacted\] at Backend\.call\(Backend\.java:42\) \[redacted\] at /);
    expect(snippet).toHaveLength(SNIPPET_CHARS + 1);
  });
});
