import { describe, expect, it } from 'vitest';
import { verfuegbarkeitAnfragen } from '../operations/verfuegbarkeit-anfragen.js';
import { MAX_TEXT_LENGTH } from './parse.js';
import { compilePattern, PlainShape, type PlainTags, patternsPerTable, plainPattern } from './plain.js';

const { leaf, nillable, optional, tag } = plainPattern;

/** A part's pattern as the decoders build it: a nillable leaf, an optional one, a leaf, the end tag. */
const PART = compilePattern([
  nillable('<m:Menge>', '</m:Menge>', '<m:Menge xsi:nil="true"/>'),
  optional(leaf('<m:Tour>', '</m:Tour>')),
  leaf('<m:Grund>', '</m:Grund>'),
  tag('</m:Anteile>'),
]);

function matchAt(src: string): RegExpExecArray | undefined {
  try {
    return new PlainShape(src, 0).match(PART);
  } catch (error) {
    if (error === PlainShape.GIVE_UP) return undefined;
    throw error;
  }
}

describe('elements read as one pattern', () => {
  it('captures the leaves in order, undefined for a nil or absent one', () => {
    const m = matchAt('\n <m:Menge>3</m:Menge> <m:Grund>KeineAngabe</m:Grund></m:Anteile><m:Next>');
    expect([m?.[1], m?.[2], m?.[3], m?.[4]]).toEqual(['3', undefined, undefined, 'KeineAngabe']);
    const nil = matchAt('<m:Menge xsi:nil="true"/><m:Tour>T</m:Tour><m:Grund>X</m:Grund></m:Anteile>');
    expect([nil?.[1], nil?.[2], nil?.[3], nil?.[4]]).toEqual([undefined, undefined, 'T', 'X']);
  });

  it('captures any other empty form of a nillable leaf as its start tag, for checkNilText', () => {
    const m = matchAt('<m:Menge i:nil="1" xmlns:i="x"/> text <m:Grund>X</m:Grund></m:Anteile>');
    expect(m?.[2]).toBe('<m:Menge i:nil="1" xmlns:i="x"/>');
  });

  it('skips the text before an optional element once, whether the element is there or not', () => {
    expect(PART.re.source).toBe(
      String.raw`[^<]*(?:<m:Menge>([^<]*)<\/m:Menge>|<m:Menge xsi:nil="true"\/>|(<m:Menge [^<>]*>))` +
        String.raw`[^<]*(?:<m:Tour>([^<]*)<\/m:Tour>[^<]*)?<m:Grund>([^<]*)<\/m:Grund>[^<]*<\/m:Anteile>`,
    );
    const texts = (src: string) => {
      const m = matchAt(src);
      return [2, 3, 4].map((k) => m?.[k]);
    };
    expect(texts('<m:Menge>1</m:Menge> x <m:Tour>T</m:Tour> y <m:Grund>G</m:Grund></m:Anteile>')).toEqual([
      undefined,
      'T',
      'G',
    ]);
    expect(texts('<m:Menge>1</m:Menge> x y <m:Grund>G</m:Grund></m:Anteile>')).toEqual([
      undefined,
      undefined,
      'G',
    ]);
  });

  it('moves past the match, so the next read starts after it', () => {
    const src = '<m:Menge>1</m:Menge><m:Grund>X</m:Grund></m:Anteile><m:Anteile>';
    const shape = new PlainShape(src, 0);
    shape.match(PART);
    expect(shape.at('<m:Anteile>')).toBe(true);
  });

  it('gives up on a tag out of place, a misspelt one or markup inside a leaf', () => {
    for (const src of [
      '<m:Grund>X</m:Grund><m:Menge>1</m:Menge></m:Anteile>',
      '<m:Menge>1</m:Menge><m:Grund>X</m:Grunt></m:Anteile>',
      '<m:Menge>1<!-- c --></m:Menge><m:Grund>X</m:Grund></m:Anteile>',
      '<m:Menge>1</m:Menge><m:Grund>X</m:Grund><m:Extra/></m:Anteile>',
    ])
      expect(matchAt(src)).toBeUndefined();
  });

  it('gives up on a text longer than the parser takes, and reads one as long', () => {
    const withTour = (tour: string) =>
      `<m:Menge>1</m:Menge><m:Tour>${tour}</m:Tour><m:Grund>X</m:Grund></m:Anteile>`;
    expect(matchAt(withTour('t'.repeat(MAX_TEXT_LENGTH)))?.[3]).toHaveLength(MAX_TEXT_LENGTH);
    expect(matchAt(withTour('t'.repeat(MAX_TEXT_LENGTH + 1)))).toBeUndefined();
  });

  it('a nil start tag cut short by a ">" in an attribute value is not taken for a whole tag', () => {
    const shape = new PlainShape('', 0);
    expect(() => shape.checkNilText('<m:Menge xsi:nil="true" a=">')).toThrow();
  });

  // A pattern whose pieces can split one run of text in many ways takes quadratic time when the match
  // fails at its end: with the capture `(<m:Menge [^<]*)` before `[^<]*<m:Grund>`, 40,000 characters
  // took 4.4 s and 100,000 about 30 s (Node 20, 2026-11-29), where a linear match takes well under a
  // millisecond. The bound holds on any machine, and such a slip fails it instead of hanging for hours
  // on a larger text (the sizes are kept small for that).
  it.each([
    ['a long text after a nil start tag', `<m:Menge a="1"/>${'x'.repeat(100_000)}<m:Oops>`],
    ['a long leaf text with a wrong end tag', `<m:Menge>${'1'.repeat(100_000)}</m:Mengx>`],
    ['a long text between elements before a wrong tag', `<m:Menge>1</m:Menge>${' '.repeat(100_000)}<m:Oops>`],
    // Skipped twice (before the optional element and again before the next), this text took 0.4 s at
    // 20,000 characters: each character given back was skipped again.
    [
      'a long text where an optional element is absent, a wrong tag at the end',
      `<m:Menge>1</m:Menge>${' '.repeat(100_000)}<m:Grund>X</m:Grund><m:Oops>`,
    ],
    ['many ">" in a nil start tag', `<m:Menge a="${'>'.repeat(50_000)}"/>${' '.repeat(50_000)}<m:Oops>`],
  ])('fails in linear time on %s', (_name, src) => {
    const started = performance.now();
    expect(matchAt(src)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  const PART_XML =
    '<m:Anteile><m:Menge>1</m:Menge><m:Typ>Normal</m:Typ><m:Lieferzeitpunkt xsi:nil="true"/><m:Grund>KeineAngabe</m:Grund><m:Tourabweichung>false</m:Tourabweichung></m:Anteile>';
  // Inside an article, read first as a whole (its leaves, a substitution, one or two parts), then, when
  // that does not match, element by element: both must fail in linear time.
  it.each([
    [
      'a long text after a nil start tag in a part',
      `<m:Anteile><m:Menge a="1"/>${'x'.repeat(100_000)}<m:Oops></m:Anteile>`,
    ],
    ['a long text after the first part before a wrong tag', `${PART_XML}${' '.repeat(100_000)}<m:Oops>`],
    [
      'a long text after the second part before a wrong tag',
      `${PART_XML}${PART_XML}${' '.repeat(100_000)}<m:Oops>`,
    ],
    [
      'a long text before a third part cut short',
      `${PART_XML}${PART_XML}${' '.repeat(100_000)}<m:Anteile>${' '.repeat(100_000)}<m:Oops>`,
    ],
    [
      'a long substitution text with a wrong end tag',
      `<m:Substitution><m:Substitutionsgrund>${'N'.repeat(100_000)}</m:Substitutionsgrunx>${PART_XML}`,
    ],
  ])('an answer built to make a pattern backtrack is decoded in linear time: %s', (_name, inside) => {
    const xml = `<?xml version="1.0"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:m="urn:msv3:v2" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><env:Body><m:verfuegbarkeitAnfragenResponse><return Id="850d3e43-3a3f-43e4-a747-852e047c0032" RTyp="Spezifisch"><m:Artikel><m:AnfrageMenge>1</m:AnfrageMenge><m:AnfragePzn>1000002</m:AnfragePzn>${inside}</m:Artikel></return></m:verfuegbarkeitAnfragenResponse></env:Body></env:Envelope>`;
    const started = performance.now();
    expect(verfuegbarkeitAnfragen.decodeResponse(xml, 2).kind).toBe('invalid');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('makes the patterns of a tags table once, and apart for each table', () => {
    const built: PlainTags[] = [];
    const patternOf = patternsPerTable((t) => {
      built.push(t);
      return compilePattern([tag(t[0]!)]);
    });
    const a: PlainTags = ['<m:A>'];
    const b: PlainTags = ['<n:A>'];
    const first = patternOf(a);
    expect(patternOf(b)).not.toBe(first);
    expect(patternOf(a)).toBe(first);
    expect(patternOf(a)).toBe(first);
    expect(built).toEqual([a, b]);
  });
});
