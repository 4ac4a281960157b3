import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyText } from './transport-outcome.js';

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
