import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import {
  availabilityResponse,
  orderResponse,
  orderStatusResponse,
} from '../test-support/arbitraries/ordering.js';
import { samplesUnavailableReason } from '../test-support/codec-test-kit.js';
import { SAMPLES_DIR } from '../test-support/xsd.js';
import { bestellen, bestellenCodec, type OrderResponse } from './bestellen.js';
import {
  bestellstatusAbfragen,
  bestellstatusAbfragenCodec,
  type OrderStatusResponse,
} from './bestellstatus-abfragen.js';
import { type AnyMsv3Operation, defineOperation } from './operation.js';
import {
  type AvailabilityResponse,
  verfuegbarkeitAnfragen,
  verfuegbarkeitAnfragenCodec,
} from './verfuegbarkeit-anfragen.js';

/**
 * The fast paths for answers in their plain form (`readResponsePlain`) must decode exactly as
 * `parseXml` + `readResponse` do, and leave everything else to them: `decodeResponse` with a fast path
 * has to give the same outcome (value, fault or error message) as without it, for any document.
 */

/** Tour texts without characters that are written as references (which make the fast path give up). */
const plainTour = <P extends { tour?: string }>(p: P): P =>
  p.tour === undefined ? p : { ...p, tour: p.tour.replace(/[^\p{L}\p{N} .-]/gu, '-') };

interface Subject {
  name: string;
  operation: AnyMsv3Operation;
  general: AnyMsv3Operation;
  fast: (xml: string, expectedVersion: Msv3Version | undefined) => unknown;
  answer: (v: Msv3Version) => fc.Arbitrary<unknown>;
  /** Small answers (so that changes land on every kind of element) with plain tours. */
  smallAnswer: (v: Msv3Version) => fc.Arbitrary<unknown>;
  /** Whether the fast path reads this answer itself. */
  isPlain: (answer: never, xml: string) => boolean;
  sample: string;
}

const subjects: Subject[] = [
  {
    name: 'verfuegbarkeitAnfragen',
    operation: verfuegbarkeitAnfragen,
    general: defineOperation({ ...verfuegbarkeitAnfragenCodec, readResponsePlain: undefined }),
    fast: verfuegbarkeitAnfragenCodec.readResponsePlain!,
    answer: availabilityResponse,
    smallAnswer: (v) =>
      availabilityResponse(v).map((a) => ({
        ...a,
        articles: a.articles
          .slice(0, 3)
          .map((article) => ({ ...article, parts: article.parts.map(plainTour) })),
      })),
    // Tours with '<', '&' … are written with references, which the fast path leaves alone.
    isPlain: (_answer: AvailabilityResponse, xml: string) => !xml.includes('&'),
    sample: 'verfuegbarkeitAnfragen.response.xml',
  },
  {
    name: 'bestellen',
    operation: bestellen,
    general: defineOperation({ ...bestellenCodec, readResponsePlain: undefined }),
    fast: bestellenCodec.readResponsePlain!,
    answer: orderResponse,
    smallAnswer: (v) =>
      orderResponse(v).map((r) => ({
        ...r,
        subOrders: r.subOrders.slice(0, 2).map((o, k) => ({
          ...o,
          // Auftragsfehler is left to the general path: keep it in one sub-order in four.
          error: k === 0 && r.supportId % 4 === 0 ? o.error : undefined,
          positions: o.positions.slice(0, 3).map((p) => ({ ...p, parts: p.parts.map(plainTour) })),
        })),
      })),
    isPlain: (answer: OrderResponse, xml: string) =>
      !xml.includes('&') && answer.subOrders.every((o) => o.error === undefined),
    sample: 'bestellen.response.xml',
  },
  {
    name: 'bestellstatusAbfragen',
    operation: bestellstatusAbfragen,
    general: defineOperation({ ...bestellstatusAbfragenCodec, readResponsePlain: undefined }),
    fast: bestellstatusAbfragenCodec.readResponsePlain!,
    answer: orderStatusResponse,
    smallAnswer: (v) =>
      orderStatusResponse(v).map((r) => ({
        ...r,
        subOrders: r.subOrders.slice(0, 2).map((o, k) => ({
          ...o,
          error: k === 0 && r.id.endsWith('0') ? o.error : undefined,
          positions: o.positions.slice(0, 3).map((p) => ({ ...p, parts: p.parts.map(plainTour) })),
        })),
      })),
    isPlain: (answer: OrderStatusResponse, xml: string) =>
      !xml.includes('&') && answer.subOrders.every((o) => o.error === undefined),
    sample: 'bestellstatusAbfragen.response.verfuegbar.xml',
  },
];

const version = fc.constantFrom<Msv3Version>(1, 2);

/** Ways of writing the same answer that the fast path reads itself. */
const PLAIN_FORMS: Record<string, (xml: string) => string> = {
  'as encoded': (xml) => xml,
  'pretty-printed': (xml) => xml.replace(/></g, '>\n    <'),
  'another prefix': (xml) => xml.replace(/(<\/?)m:/g, '$1ns2:').replace('xmlns:m=', 'xmlns:ns2='),
  'declared on the wrapper (JAX-WS style)': (xml) => {
    const decl = / xmlns:m="([^"]+)"/.exec(xml)![0];
    return xml.replace(decl, '').replace(/<m:(\w+Response)>/, `<m:$1${decl}>`);
  },
  'xsi declared on each nil element (JAXB style)': (xml) =>
    xml
      .replace(' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"', '')
      .replace(
        / xsi:nil="true"\/>/g,
        ' xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>',
      ),
  'nil as "1" under another prefix, declared first': (xml) =>
    xml.replace(/ xsi:nil="true"\/>/g, ' xmlns:n="http://www.w3.org/2001/XMLSchema-instance" n:nil="1"/>'),
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
  ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"',
  ' xmlns:m="http://www.w3.org/2001/XMLSchema-instance"',
  ' m:nil="true"',
  ' xsi:nil="false"',
  ' xsi:nil=" true"',
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
  '<m:TourId>T1</m:TourId>',
  ' GebindeId="G1"',
  '<m:Positionen>',
  '</m:Positionen>',
  '<m:Auftragsfehler><m:ErrorCode>1</m:ErrorCode><m:EndanwenderFehlertext>x</m:EndanwenderFehlertext><m:TechnischerFehlertext>y</m:TechnischerFehlertext></m:Auftragsfehler>',
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
  'NORMAL',
  'VERSAND',
  'MaxDispo',
  'KeineLieferungAberDispoMoeglich',
  'AB-12_+',
  'ab',
  '999999',
  '1000000',
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

/** Mostly the answer's own version or none, sometimes the other one. */
const expectedFor = (v: Msv3Version) =>
  fc.constantFrom<Msv3Version | undefined>(v, v, undefined, undefined, v === 1 ? 2 : 1);

describe.each(subjects)('$name answers in plain form (fast path)', (subject) => {
  const { operation, general, fast } = subject;

  it('decodes every plain form of an answer itself, to exactly what the general path decodes', () => {
    fc.assert(
      fc.property(
        version.chain((v) => fc.tuple(fc.constant(v), subject.answer(v))),
        fc.constantFrom(...Object.keys(PLAIN_FORMS)),
        ([v, answer], form) => {
          const xml = PLAIN_FORMS[form]!(operation.encodeResponse(v, answer));
          const reference = general.decodeResponse(xml, v);
          expect(reference.kind).toBe('ok');
          if (subject.isPlain(answer as never, xml))
            expect(fast(xml, v)).toStrictEqual((reference as { value: unknown }).value);
          expect(operation.decodeResponse(xml, v)).toStrictEqual(reference);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the same outcome as the general path for damaged and unusual documents', () => {
    fc.assert(
      fc.property(
        version.chain((v) => fc.tuple(fc.constant(v), subject.smallAnswer(v), expectedFor(v))),
        fc.constantFrom(...Object.keys(PLAIN_FORMS)),
        fc.array(mutation, { minLength: 1, maxLength: 2 }),
        ([v, answer, expectedVersion], form, mutations) => {
          let xml = PLAIN_FORMS[form]!(operation.encodeResponse(v, answer));
          for (const m of mutations) xml = mutate(xml, m);
          const reference = general.decodeResponse(xml, expectedVersion);
          expect(operation.decodeResponse(xml, expectedVersion)).toStrictEqual(reference);
          const value = fast(xml, expectedVersion);
          if (value !== undefined) expect(reference).toStrictEqual({ kind: 'ok', value });
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the same outcome as the general path when tolerating deviations (MSV3_TOLERATE_DEVIATIONS)', () => {
    const tolerate = { tolerate: true };
    fc.assert(
      fc.property(
        version.chain((v) => fc.tuple(fc.constant(v), subject.smallAnswer(v), expectedFor(v))),
        fc.constantFrom(...Object.keys(PLAIN_FORMS)),
        fc.array(mutation, { minLength: 1, maxLength: 2 }),
        ([v, answer, expectedVersion], form, mutations) => {
          let xml = PLAIN_FORMS[form]!(operation.encodeResponse(v, answer));
          for (const m of mutations) xml = mutate(xml, m);
          const reference = general.decodeResponse(xml, expectedVersion, tolerate);
          expect(operation.decodeResponse(xml, expectedVersion, tolerate)).toStrictEqual(reference);
          const value = fast(xml, expectedVersion);
          if (value !== undefined) expect(reference).toStrictEqual({ kind: 'ok', value });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it.skipIf(samplesUnavailableReason !== null)('reads the shared samples itself', () => {
    for (const v of [1, 2] as const) {
      const file = join(SAMPLES_DIR, `v${v}`, subject.sample);
      if (!existsSync(file)) continue;
      const xml = readFileSync(file, 'utf8');
      const reference = general.decodeResponse(xml, v);
      expect(reference.kind).toBe('ok');
      expect(fast(xml, v)).toStrictEqual((reference as { value: unknown }).value);
    }
  });
});

describe('verfuegbarkeitAnfragen fast path', () => {
  const { general, fast } = subjects[0]!;

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
      xml.replace('xsi:nil="true"/>', 'm:nil="true" xmlns:m="http://www.w3.org/2001/XMLSchema-instance"/>'),
      xml.replace('xsi:nil="true"/>', 'xsi:nil="false"/>'),
      xml.replace('xsi:nil="true"/>', 'xsi:nil="true" a="1"/>'),
      xml.replace('xsi:nil="true"/>', 'xsi:nil="true" xmlns:a="urn:a"/>'),
    ]) {
      expect(fast(other, 2)).toBeUndefined();
      expect(verfuegbarkeitAnfragen.decodeResponse(other, 2)).toStrictEqual(general.decodeResponse(other, 2));
    }
    expect(fast(xml, 1)).toBeUndefined();
    expect(verfuegbarkeitAnfragen.decodeResponse(xml, 1)).toStrictEqual(general.decodeResponse(xml, 1));
  });

  it('reads articles of one to five parts, with and without a substitution, itself', () => {
    const part = (k: number) => ({
      quantity: k + 1,
      type: k === 0 ? ('Normal' as const) : ('Nachlieferung' as const),
      deliveryTime: k === 0 ? '2025-03-18T08:30:00+01:00' : null,
      tour: k === 0 ? 'Tour 1' : undefined,
      defectReason: k === 0 ? ('KeineAngabe' as const) : ('FehltZurzeit' as const),
      tourDeviation: k === 2,
    });
    const substitution = {
      reason: 'Nachfolgeprodukt' as const,
      defectReason: 'AusserHandel' as const,
      deliveredPzn: '01234567',
    };
    for (const v of [1, 2] as const) {
      const articles = [1, 2, 3, 5, 1, 2, 4].map((count, i) => ({
        requestedQuantity: 3,
        requestedPzn: `0411491${i}`,
        ...(i % 2 === 1 ? { substitution } : {}),
        parts: Array.from({ length: count }, (_, k) => part(k)).map((p) =>
          v === 1 ? { ...p, tourDeviation: undefined } : p,
        ),
      }));
      const xml = verfuegbarkeitAnfragen.encodeResponse(v, {
        id: '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
        responseType: 'Spezifisch',
        articles,
      });
      const decoded = fast(xml, v) as AvailabilityResponse | undefined;
      expect(decoded).toBeDefined();
      expect(general.decodeResponse(xml, v)).toStrictEqual({ kind: 'ok', value: decoded });
      expect(decoded!.articles.map((a) => a.parts.length)).toEqual([1, 2, 3, 5, 1, 2, 4]);
      expect(decoded!.articles.map((a) => a.substitution !== undefined)).toEqual([
        false,
        true,
        false,
        true,
        false,
        true,
        false,
      ]);
    }
  });
});

describe('bestellen fast path', () => {
  const { general, fast } = subjects[1]!;

  it('leaves other shapes to the general path', () => {
    const position = {
      pzn: '04114918',
      quantity: 2,
      deliveryInstruction: 'Normal' as const,
      parts: [
        {
          quantity: 2,
          type: 'Normal' as const,
          deliveryTime: '2025-03-18T14:30:00+01:00',
          tour: 'Mittagstour',
          defectReason: 'KeineAngabe' as const,
          tourId: 'T1',
          tourDeviation: false,
        },
      ],
    };
    const xml = bestellen.encodeResponse(2, {
      id: '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
      supportId: 4711,
      nightMode: false,
      subOrders: [
        {
          id: '4f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
          orderType: 'NORMAL',
          orderLabel: 'K1',
          supportId: 4712,
          positions: [position, { ...position, pzn: '01234567' }],
        },
      ],
    });
    expect(fast(xml, 2)).toBeDefined();
    for (const other of [
      xml.replace('</m:Positionen></m:Auftraege>', '</m:Positionen>'),
      xml.replace('BestellSupportId="4711"', 'BestellSupportId="0"'),
      xml.replace('AuftragsSupportID="4712"', 'AuftragsSupportID="1000000"'),
      xml.replace('NachtBetrieb="false"', 'NachtBetrieb="no"'),
      xml.replace('Auftragskennung="K1"', 'Auftragskennung="k1"'),
      xml.replace('Auftragskennung="K1"', 'Auftragskennung="K1" xsi:type="x"'),
      xml.replace('Auftragskennung="K1"', 'Auftragskennung="K1" xmlns:a="urn:a"'),
      xml.replace(
        '</m:Positionen></m:Auftraege>',
        '</m:Positionen><m:Auftragsfehler><m:ErrorCode>1</m:ErrorCode><m:EndanwenderFehlertext>x</m:EndanwenderFehlertext><m:TechnischerFehlertext>y</m:TechnischerFehlertext></m:Auftragsfehler></m:Auftraege>',
      ),
      xml.replace('<m:TourId>T1</m:TourId>', '<m:TourId>t1</m:TourId>'),
      xml.replace('<m:BestellLiefervorgabe>Normal', '<m:BestellLiefervorgabe>Sofort'),
    ]) {
      expect(fast(other, 2)).toBeUndefined();
      expect(bestellen.decodeResponse(other, 2)).toStrictEqual(general.decodeResponse(other, 2));
    }
  });
});

describe('decodeResponse without the fast path (FAST_PATH_DECODING=false)', () => {
  it('leaves the answer to the general decoder when asked to', () => {
    // A fast path that answers something else shows which path decided.
    const marked = defineOperation({
      ...verfuegbarkeitAnfragenCodec,
      readResponsePlain: () => 'from the fast path' as never,
    });
    const [answer] = fc.sample(availabilityResponse(2), { numRuns: 1, seed: 12 });
    const xml = verfuegbarkeitAnfragen.encodeResponse(2, answer);
    expect(marked.decodeResponse(xml, 2)).toStrictEqual({ kind: 'ok', value: 'from the fast path' });
    const general = marked.decodeResponse(xml, 2, { plain: false });
    expect(general.kind).toBe('ok');
    expect(general).toStrictEqual(subjects[0]!.general.decodeResponse(xml, 2));
  });
});
