import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SOAP12_NS } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import { orderResponse } from '../test-support/arbitraries/ordering.js';
import { readSample, samplesUnavailableReason } from '../test-support/codec-test-kit.js';
import { SAMPLES_DIR } from '../test-support/xsd.js';
import { bestellen } from './bestellen.js';
import { operations } from './index.js';

/**
 * Every decoder in the registry (requests and responses, including operations added later) gets
 * mutated and hostile XML and must answer with a DecodeResult: never throw, never hang. The time
 * bound per call is deliberately generous; it catches hangs and runaway (quadratic) work, not speed.
 */

const decoders: { name: string; decode: (xml: string) => unknown }[] = operations.flatMap((op) => [
  { name: `${op.name}.decodeRequest`, decode: (xml: string) => op.decodeRequest(xml) },
  { name: `${op.name}.decodeResponse`, decode: (xml: string) => op.decodeResponse(xml) },
]);

const MAX_MS_PER_DECODE = 2_000;

function isDecodeResult(value: unknown): value is DecodeResult<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as { kind?: unknown; error?: { message?: unknown }; fault?: { kind?: unknown } };
  if (r.kind === 'invalid') return typeof r.error?.message === 'string';
  if (r.kind === 'fault') return typeof r.fault?.kind === 'string';
  return r.kind === 'ok' && 'value' in r;
}

/** Runs every decoder on `xml`; returns what went wrong (empty when every decoder behaved). */
function misbehaviours(xml: string): string[] {
  const problems: string[] = [];
  for (const { name, decode } of decoders) {
    const started = performance.now();
    let result: unknown;
    try {
      result = decode(xml);
    } catch (error) {
      problems.push(`${name} threw ${String(error)}`);
      continue;
    }
    const ms = performance.now() - started;
    if (!isDecodeResult(result)) problems.push(`${name} returned ${JSON.stringify(result)?.slice(0, 200)}`);
    if (ms > MAX_MS_PER_DECODE) problems.push(`${name} took ${ms.toFixed(0)} ms`);
  }
  return problems;
}

function seedEnvelopes(): string[] {
  const seeds = fc
    .sample(orderResponse(2), { numRuns: 3, seed: 42 })
    .map((r) => bestellen.encodeResponse(2, r));
  if (samplesUnavailableReason !== null) return seeds;
  for (const version of ['v1', 'v2']) {
    for (const file of readdirSync(join(SAMPLES_DIR, version))) {
      if (file.endsWith('.xml')) seeds.push(readSample(`${version}/${file}`));
    }
  }
  return seeds;
}

const SNIPPETS = [
  '<',
  '>',
  '&',
  '"',
  '/',
  '</',
  '/>',
  ']]>',
  '<!--',
  '<![CDATA[',
  '&amp;',
  '&#0;',
  '\uD800',
  'xmlns:m="urn:msv3:v1"',
  'xsi:nil="true"',
  '<?x?>',
];

type Mutation =
  | { kind: 'flip'; at: number; mask: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'duplicate'; at: number; length: number; to: number }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'insert'; at: number; text: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('duplicate' as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 400 }),
    to: fc.nat(),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.constantFrom(...SNIPPETS) }),
);

/** Applies the mutations to the UTF-8 bytes, as a transport would receive them, and decodes leniently. */
function mutate(xml: string, mutations: Mutation[]): string {
  let bytes = Buffer.from(xml, 'utf8');
  for (const m of mutations) {
    if (bytes.length === 0) break;
    const at = m.at % bytes.length;
    if (m.kind === 'flip') {
      bytes = Buffer.from(bytes);
      bytes[at] = bytes[at]! ^ m.mask;
    } else if (m.kind === 'truncate') bytes = bytes.subarray(0, at);
    else if (m.kind === 'duplicate') {
      const piece = bytes.subarray(at, at + m.length);
      const to = m.to % bytes.length;
      bytes = Buffer.concat([bytes.subarray(0, to), piece, bytes.subarray(to)]);
    } else if (m.kind === 'delete')
      bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]);
    else bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.text, 'utf8'), bytes.subarray(at)]);
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

const envelope = (payload: string, declarations = '') =>
  `<?xml version="1.0"?>${declarations}<env:Envelope xmlns:env="${SOAP12_NS}" xmlns:m="urn:msv3:v2"><env:Body>${payload}</env:Body></env:Envelope>`;

describe('every registered decoder on mutated envelopes', () => {
  it(`covers all ${operations.length} registered operations`, () => {
    expect(decoders).toHaveLength(operations.length * 2);
    expect(new Set(operations.map((op) => op.name)).size).toBe(operations.length);
  });

  it('returns a DecodeResult for byte flips, truncations, duplications, deletions and insertions', () => {
    const seeds = seedEnvelopes();
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(mutation, { minLength: 1, maxLength: 6 }),
        (seed, mutations) => {
          expect(misbehaviours(mutate(seed, mutations))).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('returns a DecodeResult for every unmutated seed too', () => {
    for (const seed of seedEnvelopes()) expect(misbehaviours(seed)).toEqual([]);
  });
});

describe('every registered decoder on hostile XML', () => {
  const deep = `${'<m:a>'.repeat(10_000)}${'</m:a>'.repeat(10_000)}`;
  const laughs =
    '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
    '<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]>';
  const cases: [string, () => string][] = [
    [
      'an external entity (XXE)',
      () =>
        envelope(
          '<m:verbindungTesten><clientSoftwareKennung>&xxe;</clientSoftwareKennung></m:verbindungTesten>',
          '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
        ),
    ],
    [
      'billion laughs',
      () =>
        envelope('<m:bestellen><clientSoftwareKennung>&lol2;</clientSoftwareKennung></m:bestellen>', laughs),
    ],
    [
      'a 10 MB document',
      () =>
        envelope(
          `<m:verfuegbarkeitAnfragenBulk><clientSoftwareKennung>W</clientSoftwareKennung><verfuegbarkeitsanfrageBulk Id="5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d">${'<m:Pzn>4114918</m:Pzn>'.repeat(460_000)}</verfuegbarkeitsanfrageBulk></m:verfuegbarkeitAnfragenBulk>`,
        ),
    ],
    [
      'a 3.9 MB document under the size cap',
      () =>
        envelope(
          `<m:verfuegbarkeitAnfragenBulk><clientSoftwareKennung>W</clientSoftwareKennung><verfuegbarkeitsanfrageBulk Id="5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d">${'<m:Pzn>4114918</m:Pzn>'.repeat(170_000)}</verfuegbarkeitsanfrageBulk></m:verfuegbarkeitAnfragenBulk>`,
        ),
    ],
    ['a 10 000-deep nesting', () => envelope(deep)],
    [
      'nesting just inside the depth cap',
      () => envelope(`<m:bestellen>${'<m:a>'.repeat(58)}${'</m:a>'.repeat(58)}</m:bestellen>`),
    ],
    [
      'an unknown entity',
      () =>
        envelope(
          '<m:verbindungTesten><clientSoftwareKennung>&nbsp;</clientSoftwareKennung></m:verbindungTesten>',
        ),
    ],
    [
      'a character reference to a surrogate',
      () =>
        envelope(
          '<m:verbindungTesten><clientSoftwareKennung>&#xD800;</clientSoftwareKennung></m:verbindungTesten>',
        ),
    ],
    [
      'lone UTF-16 surrogates in text, names and attributes',
      () =>
        envelope(
          `<m:bestellen><clientSoftwareKennung>\uD800x\uDC00</clientSoftwareKennung><bestellung Id="\uDBFF" BestellSupportId="1"><m:\uD800/></bestellung></m:bestellen>`,
        ),
    ],
    [
      'a 3 MB attribute value',
      () =>
        envelope(
          `<m:bestellenResponse><return Id="${'9'.repeat(3_000_000)}" BestellSupportId="1" NachtBetrieb="true"/></m:bestellenResponse>`,
        ),
    ],
    [
      'an unterminated 3 MB attribute value',
      () => envelope(`<m:bestellenResponse><return Id="${'a'.repeat(3_000_000)}`),
    ],
    [
      '__proto__ and constructor element and attribute names',
      () =>
        envelope(
          `<m:__proto__ constructor="x" __proto__="y"><constructor><m:prototype>1</m:prototype></constructor><__proto__/></m:__proto__>`,
        ),
    ],
    [
      '__proto__ as a wrapper child of every operation',
      () =>
        operations.map((op) => envelope(`<m:${op.name}><__proto__/><constructor/></m:${op.name}>`)).join(''),
    ],
    [
      '100 000 sibling elements',
      () =>
        envelope(
          `<m:verfuegbarkeitAnfragenResponse><return Id="3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b" RTyp="Spezifisch">${'<m:Artikel/>'.repeat(100_000)}</return></m:verfuegbarkeitAnfragenResponse>`,
        ),
    ],
    [
      'many distinct element names',
      () =>
        envelope(
          `<m:bestellen>${Array.from({ length: 20_000 }, (_, i) => `<m:n${i}>x</m:n${i}>`).join('')}</m:bestellen>`,
        ),
    ],
    [
      'mismatched closing tags far apart',
      () =>
        envelope(
          `<m:bestellen>${'<m:Positionen>x</m:Positionen>'.repeat(50_000)}<m:Pzn>1</m:Positionen></m:bestellen>`,
        ),
    ],
    [
      'a SOAP 1.1 envelope',
      () => '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>',
    ],
    [
      'a fault without detail',
      () => envelope('<env:Fault><env:Code><env:Value>env:Sender</env:Value></env:Code></env:Fault>'),
    ],
    ['an empty string', () => ''],
    [
      'binary garbage',
      () => String.fromCharCode(...Array.from({ length: 5000 }, (_, i) => (i * 7919) % 65_536)),
    ],
  ];

  it.each(cases)('returns a DecodeResult for %s', (_name, build) => {
    expect(misbehaviours(build())).toEqual([]);
  });

  it('refuses the entity attacks as invalid rather than expanding anything', () => {
    for (const [name, build] of cases.slice(0, 2)) {
      for (const { decode } of decoders) {
        const result = decode(build()) as DecodeResult<unknown>;
        expect(result.kind, name).toBe('invalid');
        if (result.kind === 'invalid') expect(result.error.message).toContain('DOCTYPE');
      }
    }
  });

  it('leaves Object.prototype untouched', () => {
    misbehaviours(cases.find(([n]) => n.startsWith('__proto__ and'))![1]());
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(({} as Record<string, unknown>).prototype).toBeUndefined();
  });
});
