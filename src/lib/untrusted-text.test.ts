import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sanitizeUntrustedText, UNTRUSTED_TEXT_MAX_LENGTH } from './untrusted-text.js';

/** What a terminal, a log viewer or a browser would interpret. */
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
const TAG = /<\/?[A-Za-z!?][^<>]*>/;

/** Text assembled from the pieces hostile wholesaler texts are made of, plus arbitrary characters. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '\u001b[31m',
        '\u001b[0m',
        '\u001b[2J',
        '\u001b[',
        '\u001b]0;pwned\u0007',
        '\u001b]8;;https://evil.example\u001b\\',
        '\u001b]',
        '\u009b1m',
        '\u009d2;t\u009c',
        '\u001bc',
        '\u001b(B',
        '\u001b',
        '\u0000',
        '\u0007',
        '\b',
        '\r',
        '\n',
        '\t',
        '\u0085',
        '\u007f',
        '\u202e',
        '\u2066',
        '\u2069',
        '\u200f',
        '<script>',
        '</script>',
        '<script src="x">alert(1)</script>',
        '<b>',
        '<',
        '>',
        '</',
        '<!--',
        '-->',
        '<![CDATA[',
        ']]>',
        '<?xml ?>',
        'a',
        'Lieferstopp',
        ' ',
        '  ',
        'ä',
        '😀',
        '\ud83d',
      ),
      fc.string({ maxLength: 8 }),
      fc.string({ unit: 'binary', maxLength: 4 }),
    ),
    { maxLength: 80 },
  )
  .map((parts) => parts.join(''));

describe('sanitizeUntrustedText', () => {
  it('never returns controls, escape sequences, bidi formatting or tags, never over the cap, and is idempotent', () => {
    fc.assert(
      fc.property(hostileText, fc.integer({ min: 1, max: 600 }), (text, maxLength) => {
        const clean = sanitizeUntrustedText(text, maxLength);
        expect(clean).not.toMatch(FORBIDDEN);
        expect(clean).not.toMatch(TAG);
        expect(clean).not.toMatch(/\s\s|^\s|\s$/);
        expect(clean.length).toBeLessThanOrEqual(maxLength);
        expect(sanitizeUntrustedText(clean, maxLength)).toBe(clean);
      }),
      { numRuns: 2_000 },
    );
  });

  it('removes markup exactly as removing one tag at a time until none is left would', () => {
    // The definition, as the code once ran it: simple, but quadratic on hostile text.
    const byRepetition = (text: string) => {
      let clean = text;
      for (let before = ''; before !== clean; ) {
        before = clean;
        clean = clean
          .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
          .replace(/<\/?[A-Za-z!?][^<>]*>/g, ' ');
      }
      return clean.replace(/\s+/g, ' ').trim();
    };
    const markup = fc
      .array(
        fc.constantFrom(
          '<',
          '>',
          '/',
          '!',
          'a',
          'b',
          ' ',
          'x',
          '<script>',
          '</script>',
          '<style a>',
          '</STYLE >',
        ),
        {
          maxLength: 40,
        },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(markup, (text) => {
        expect(sanitizeUntrustedText(text, 10_000)).toBe(byRepetition(text));
      }),
      { numRuns: 5_000 },
    );
  });

  it('takes one pass over hostile markup a repeated search would take minutes for', () => {
    // 48 KB of these took 1.9 s, growing fourfold per doubling; 2 MB would take about an hour.
    // A cap this high reads all of it (see the next test).
    const nested = `${'<a'.repeat(500_000)}${'>'.repeat(500_000)}`;
    expect(sanitizeUntrustedText(nested, 1_000_000)).toBe('');
    const unclosed = `${'<script>'.repeat(100_000)}text`;
    expect(sanitizeUntrustedText(unclosed, 1_000_000)).toBe('text');
  });

  it('reads only the first 64 characters per character it may show, never half a surrogate pair', () => {
    expect(sanitizeUntrustedText(`${'x'.repeat(640)}tail`, 10)).toBe('xxxxxxxxx…');
    // 10 shown characters: 640 read. 212 tags are 636 characters.
    expect(sanitizeUntrustedText(`${'<b>'.repeat(212)}seen`, 10)).toBe('seen');
    expect(sanitizeUntrustedText(`${'<br>'.repeat(160)}unseen`, 10)).toBe('');
    expect(sanitizeUntrustedText(`${'<b>'.repeat(212)}abc😀`, 10)).toBe('abc');
  });

  it('keeps ordinary text, umlauts and a lone < as they are', () => {
    expect(sanitizeUntrustedText('Artikel 04114918: Menge < 5 ist nicht lieferbar (Großhändler)')).toBe(
      'Artikel 04114918: Menge < 5 ist nicht lieferbar (Großhändler)',
    );
  });

  it('removes colours, window titles, hyperlinks and cursor moves but keeps their visible text', () => {
    expect(
      sanitizeUntrustedText(
        '\u001b[1;31mFehler\u001b[0m\u001b]0;owned\u0007 beim \u001b]8;;https://evil.example\u001b\\Link\u001b]8;;\u001b\\\u001b[2K',
      ),
    ).toBe('Fehler beim Link');
  });

  it('drops script and style elements with their content, and every other tag by itself', () => {
    expect(
      sanitizeUntrustedText(
        'Bitte <b>später</b> erneut<script>fetch("//evil")</script> versuchen<br/><style>*{}</style>.',
      ),
    ).toBe('Bitte später erneut versuchen .');
    // A tag hidden in another leaves a `<` followed by a space: inert text, not a tag.
    expect(sanitizeUntrustedText('<<b>script>alert(1)<</b>/script>')).toBe('< script>alert(1)< /script>');
    expect(sanitizeUntrustedText('<a<b>>x')).toBe('x');
  });

  it('removes bidi overrides and isolates, and turns line breaks and tabs into single spaces', () => {
    expect(sanitizeUntrustedText('Rechnung\u202Efdp.exe\u202C\r\n\tfällig\u2066x\u2069')).toBe(
      'Rechnungfdp.exe fälligx',
    );
  });

  it(`cuts at ${UNTRUSTED_TEXT_MAX_LENGTH} characters with an ellipsis, never inside a surrogate pair`, () => {
    const long = sanitizeUntrustedText('x'.repeat(2_000));
    expect(long).toHaveLength(UNTRUSTED_TEXT_MAX_LENGTH);
    expect(long.endsWith('x…')).toBe(true);
    const emoji = sanitizeUntrustedText(`${'x'.repeat(3)}😀😀`, 5);
    expect(emoji).toBe('xxx…');
  });
});
