import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import { availabilityResponse } from '../test-support/arbitraries/ordering.js';
import { samplesUnavailableReason } from '../test-support/codec-test-kit.js';
import { SAMPLES_DIR } from '../test-support/xsd.js';
import { defineOperation } from './operation.js';
import { verfuegbarkeitAnfragen, verfuegbarkeitAnfragenCodec } from './verfuegbarkeit-anfragen.js';

/**
 * The fast path for answers in their plain form (`readResponsePlain`) must decode exactly as
 * `parseXml` + `readResponse` do, and leave everything else to them: `decodeResponse` with it has to
 * give the same outcome (value, fault or error message) as without it, for any document.
 */
const general = defineOperation({ ...verfuegbarkeitAnfragenCodec, readResponsePlain: undefined });
const fast = verfuegbarkeitAnfragenCodec.readResponsePlain!;

const version = fc.constantFrom<Msv3Version>(1, 2);

/** Ways of writing the same answer that the fast path reads itself. */
const PLAIN_FORMS: Record<string, (xml: string) => string> = {
  'as encoded': (xml) => xml,
  'pretty-printed': (xml) => xml.replace(/></g, '>\n    <'),
  'another prefix': (xml) => xml.replace(/(<\/?)m:/g, '$1ns2:').replace('xmlns:m=', 'xmlns:ns2='),
  'declared on the wrapper (JAX-WS style)': (xml) => {
    const decl = / xmlns:m="([^"]+)"/.exec(xml)![0];
    return xml.replace(decl, '').replace(/<m:(verfuegbarkeitAnfragenResponse)>/, `<m:$1${decl}>`);
  },
  'a comment before the root': (xml) => xml.replace('<env:Envelope', '<!-- sample -->\n<env:Envelope'),
  'another XSI prefix, a BOM, no declaration': (xml) =>
    `\uFEFF${xml
      .replace(/xsi:/g, 'i:')
      .replace('xmlns:xsi=', 'xmlns:i=')
      .replace(/^<\?xml[^>]*\?>/, '')}`,
};

const SNIPPETS = [
  '<!-- c -->',
  '<![CDATA[x]]>',
  '&amp;',
  '&#49;',
  ' ',
  '\n',
  'x',
  '1',
  '<?pi x?>',
  '<!DOCTYPE a>',
  ' xmlns:m="urn:msv3:v1"',
  ' xmlns="urn:msv3:v2"',
  ' xsi:nil="true"',
  ' a="1"',
  '/',
  '<m:Tour>T</m:Tour>',
  '<m:Menge>1</m:Menge>',
  '<m:Menge xsi:nil="true"/>',
  '<m:Grund>KeineAngabe</m:Grund>',
  '<m:Anteile>',
  '</m:Anteile>',
  '</m:Artikel><m:Artikel>',
  '<env:Header/>',
];

/** Text values that each reader must refuse, or read exactly like the general path. */
const VALUES = [
  '',
  ' ',
  '0',
  '-1',
  '+7',
  ' 5 ',
  '100000',
  '99999',
  '1e3',
  '00012345678',
  'normal',
  'Normal ',
  'Nachlieferung',
  'HerstellerNichtLieferbar',
  'Teildefekt',
  'Vorschlag',
  'true',
  ' 1',
  'TRUE',
  '2025-02-29T10:00:00',
  '2024-02-29T24:00:00Z',
  '2025-03-18T10:00:00+14:30',
  ' 2025-03-18T10:00:00.5-01:00 ',
  'x'.repeat(81),
  '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
  'Spezifisch',
];

/**
 * One change near markup (`at` picks a '<', '>' or '"' of the document, `offset` moves from it), or the
 * text of one leaf or attribute value replaced by a tricky value.
 */
const mutation = fc.oneof(
  fc.record({
    kind: fc.constantFrom('insert' as const, 'delete' as const, 'replace' as const),
    at: fc.nat(),
    offset: fc.integer({ min: -2, max: 12 }),
    text: fc.constantFrom(...SNIPPETS, '<', '>', '"', 'a', '0', ':'),
    length: fc.integer({ min: 1, max: 12 }),
  }),
  fc.record({ kind: fc.constant('value' as const), at: fc.nat(), text: fc.constantFrom(...VALUES) }),
  fc.record({ kind: fc.constantFrom('drop' as const, 'repeat' as const), at: fc.nat() }),
);

type Edit = { at: number; offset: number; text: string; length: number };
type Mutation =
  | ({ kind: 'insert' } & Edit)
  | ({ kind: 'delete' } & Edit)
  | ({ kind: 'replace' } & Edit)
  | { kind: 'value'; at: number; text: string }
  | { kind: 'drop'; at: number }
  | { kind: 'repeat'; at: number };

function mutate(xml: string, m: Mutation): string {
  if (m.kind === 'value') {
    // Leaf texts (between '>' and '</') and attribute values.
    const ranges = [...xml.matchAll(/>([^<]*)<\/|="([^"]*)"/g)].map((r) => {
      const start = r.index + (r[1] !== undefined ? 1 : 2);
      return [start, start + (r[1] ?? r[2] ?? '').length] as const;
    });
    const [from, to] = ranges[m.at % ranges.length]!;
    return xml.slice(0, from) + m.text + xml.slice(to);
  }
  if (m.kind === 'drop' || m.kind === 'repeat') {
    // One tag dropped, or one element (from a start tag to the first end tag of its name) repeated.
    const tags = [...xml.matchAll(/<[^>]*>/g)];
    const tag = tags[m.at % tags.length]!;
    const end = tag.index + tag[0].length;
    if (m.kind === 'drop') return xml.slice(0, tag.index) + xml.slice(end);
    const name = /^<([^\s/>]+)/.exec(tag[0])?.[1];
    const close = name === undefined ? -1 : xml.indexOf(`</${name}>`, end);
    const until = tag[0].endsWith('/>') || close === -1 ? end : close + name!.length + 3;
    return xml.slice(0, until) + xml.slice(tag.index, until) + xml.slice(until);
  }
  const marks = [...xml.matchAll(/[<>"]/g)].map((r) => r.index);
  const at = Math.max(0, Math.min(xml.length, marks[m.at % marks.length]! + m.offset));
  if (m.kind === 'insert') return xml.slice(0, at) + m.text + xml.slice(at);
  if (m.kind === 'delete') return xml.slice(0, at) + xml.slice(at + m.length);
  return xml.slice(0, at) + m.text.charAt(0) + xml.slice(at + 1);
}

/**
 * A small answer (up to three articles, so that changes land on every kind of element), with tours
 * that need no references (a reference anywhere makes the fast path leave the document alone).
 */
const smallAnswer = version.chain((v) =>
  fc.tuple(
    fc.constant(v),
    availabilityResponse(v).map((a) => ({
      ...a,
      articles: a.articles.slice(0, 3).map((article) => ({
        ...article,
        parts: article.parts.map((p) =>
          p.tour === undefined ? p : { ...p, tour: p.tour.replace(/[^\p{L}\p{N} .-]/gu, '-') },
        ),
      })),
    })),
  ),
);

/** Mostly the answer's own version or none, sometimes the other one. */
const expectedFor = (v: Msv3Version) =>
  fc.constantFrom<Msv3Version | undefined>(v, v, undefined, undefined, v === 1 ? 2 : 1);

describe('verfuegbarkeitAnfragen answers in plain form (fast path)', () => {
  it('decodes every plain form of an answer itself, to exactly what the general path decodes', () => {
    fc.assert(
      fc.property(
        version.chain((v) => fc.tuple(fc.constant(v), availabilityResponse(v))),
        fc.constantFrom(...Object.keys(PLAIN_FORMS)),
        ([v, answer], form) => {
          const xml = PLAIN_FORMS[form]!(verfuegbarkeitAnfragen.encodeResponse(v, answer));
          const reference = general.decodeResponse(xml, v);
          expect(reference.kind).toBe('ok');
          // Tours with '<', '&' … are written with references, which the fast path leaves alone.
          if (!xml.includes('&')) expect(fast(xml, v)).toStrictEqual((reference as { value: unknown }).value);
          expect(verfuegbarkeitAnfragen.decodeResponse(xml, v)).toStrictEqual(reference);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the same outcome as the general path for damaged and unusual documents', () => {
    fc.assert(
      fc.property(
        smallAnswer.chain(([v, answer]) => fc.tuple(fc.constant(v), fc.constant(answer), expectedFor(v))),
        fc.constantFrom(...Object.keys(PLAIN_FORMS)),
        fc.array(mutation, { minLength: 1, maxLength: 2 }),
        ([v, answer, expectedVersion], form, mutations) => {
          let xml = PLAIN_FORMS[form]!(verfuegbarkeitAnfragen.encodeResponse(v, answer));
          for (const m of mutations) xml = mutate(xml, m);
          const reference = general.decodeResponse(xml, expectedVersion);
          expect(verfuegbarkeitAnfragen.decodeResponse(xml, expectedVersion)).toStrictEqual(reference);
          const value = fast(xml, expectedVersion);
          if (value !== undefined) expect(reference).toStrictEqual({ kind: 'ok', value });
        },
      ),
      { numRuns: 3000 },
    );
  });

  it.skipIf(samplesUnavailableReason !== null)('reads the shared samples itself', () => {
    for (const v of [1, 2] as const) {
      const xml = readFileSync(join(SAMPLES_DIR, `v${v}`, 'verfuegbarkeitAnfragen.response.xml'), 'utf8');
      const reference = general.decodeResponse(xml, v);
      expect(reference.kind).toBe('ok');
      expect(fast(xml, v)).toStrictEqual((reference as { value: unknown }).value);
    }
  });

  it('leaves other shapes to the general path', () => {
    const xml = verfuegbarkeitAnfragen.encodeResponse(2, {
      id: '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
      responseType: 'Spezifisch',
      articles: [
        {
          requestedQuantity: 1,
          requestedPzn: '04114918',
          parts: [
            {
              quantity: 1,
              type: 'Normal',
              deliveryTime: null,
              defectReason: 'KeineAngabe',
              tourDeviation: false,
            },
          ],
        },
      ],
    });
    expect(fast(xml, 2)).toBeDefined();
    for (const other of [
      xml.replace('<m:Typ>', '<!-- c --><m:Typ>'),
      xml.replace('<m:Typ>Normal', '<m:Typ>Nor&#109;al'),
      xml.replace('<env:Body>', '<env:Header/><env:Body>'),
      xml.replace('<m:Typ>', '<m:Typ xmlns:m="urn:msv3:v2">'),
      xml.replace('<m:Typ>Normal</m:Typ>', '<m:Typ>Normal</m:Typ >'),
      xml.replace(
        '<m:Lieferzeitpunkt xsi:nil="true"/>',
        '<m:Lieferzeitpunkt xsi:nil="true"></m:Lieferzeitpunkt>',
      ),
      xml.replace('</env:Envelope>', '</env:Envelope><!-- c -->'),
      xml.replace(/^<\?xml[^>]*\?>/, '<!DOCTYPE a>'),
      xml.replace('<env:Envelope ', '<env:Envelope xmlns="urn:msv3:v2" '),
      xml.replace(/<m:Artikel>.*<\/m:Artikel>/, ''),
    ]) {
      expect(fast(other, 2)).toBeUndefined();
      expect(verfuegbarkeitAnfragen.decodeResponse(other, 2)).toStrictEqual(general.decodeResponse(other, 2));
    }
    expect(fast(xml, 1)).toBeUndefined();
    expect(verfuegbarkeitAnfragen.decodeResponse(xml, 1)).toStrictEqual(general.decodeResponse(xml, 1));
  });
});
