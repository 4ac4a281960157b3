import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeJsonError, firstJsonError, lineColumn } from './json-error-position.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** JSON text with one character inserted, removed or replaced somewhere: mostly invalid, sometimes not. */
const mutatedJson = fc
  .tuple(
    fc.json({ maxDepth: 3 }),
    fc.nat(),
    fc.constantFrom('insert', 'remove', 'replace'),
    fc.constantFrom('}', ']', ',', ':', '"', '\\', 'x', '1', ' ', '\n', '{', '[', '-', '.', 'e', '\u0001'),
  )
  .map(([text, at, how, c]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    if (how === 'insert') return text.slice(0, i) + c + text.slice(i);
    if (how === 'remove') return text.slice(0, i) + text.slice(i + 1);
    return text.slice(0, i) + c + text.slice(i + 1);
  });

describe('finding where JSON goes wrong', () => {
  it('finds an error exactly when JSON.parse refuses the text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json({ maxDepth: 4 }), mutatedJson, fc.string({ maxLength: 12 })), (text) => {
        const offset = firstJsonError(text);
        expect(offset === undefined).toBe(parses(text));
        if (offset !== undefined) expect(offset).toBeGreaterThanOrEqual(0);
        if (offset !== undefined) expect(offset).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('points at the first character that cannot continue the text: everything before it is a valid start', () => {
    fc.assert(
      fc.property(mutatedJson, (text) => {
        const offset = firstJsonError(text);
        if (offset === undefined || offset === text.length) return;
        // The text up to the error is valid JSON or the start of it: it can fail only by ending too early.
        expect([undefined, offset]).toContain(firstJsonError(text.slice(0, offset)));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with the position Node names, where it names one', () => {
    for (const text of ['{"a":1,}', '{"a"', '[1,2', '{"a" 1}', '[1 2]', '"\\x"', '{"a":1}}']) {
      let position: number | undefined;
      try {
        JSON.parse(text);
      } catch (error) {
        const match = /at position (\d+)/.exec((error as Error).message);
        position = match === null ? undefined : Number(match[1]);
      }
      if (position !== undefined) expect(firstJsonError(text), text).toBe(position);
    }
  });

  it('copes with any nesting depth without recursion', () => {
    expect(firstJsonError(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toBeUndefined();
    expect(firstJsonError(`${'['.repeat(200_000)}}`)).toBe(200_000);
  });

  it('counts lines at line feeds and columns from 1, as splitting the text does', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', '\n', '\r', ' ', 'é'), maxLength: 40 }),
        fc.nat(),
        (text, n) => {
          const offset = n % (text.length + 1);
          const lines = text.slice(0, offset).split('\n');
          expect(lineColumn(text, offset)).toEqual({
            line: lines.length,
            column: lines.at(-1)!.length + 1,
          });
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('describing a JSON error', () => {
  it('names the character found, its line, column and offset', () => {
    expect(describeJsonError('{\n  "wholesaler": "phoenix",\n}')).toBe(
      'The request body is not valid JSON: unexpected `}` at line 3, column 1 (character 30).',
    );
    expect(describeJsonError('{"items": [')).toBe(
      'The request body is not valid JSON: it ends too early at line 1, column 12 (character 12).',
    );
    expect(describeJsonError('{"a": "x\u0001"}')).toBe(
      'The request body is not valid JSON: unexpected control character U+0001 at line 1, column 9 (character 9).',
    );
    expect(describeJsonError('  ')).toBe('The request body is empty; send a JSON object.');
  });

  it('shows one character of the body at most, however long the body', () => {
    const secret = 'S3cr3t-Passw0rd-that-must-not-show';
    const message = describeJsonError(`{"note": "${secret}" ${'x'.repeat(10_000)}}`);
    expect(message).not.toContain('S3cr3t');
    expect(message).toBe(
      'The request body is not valid JSON: unexpected `x` at line 1, column 47 (character 47).',
    );
  });
});
