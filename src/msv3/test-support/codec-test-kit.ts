import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc, { type Arbitrary } from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Msv3Version, SOAP12_NS } from '../envelope.js';
import type { Msv3Operation } from '../operations/operation.js';
import type { DecodeResult, Msv3Fault } from '../result.js';
import { SAMPLES_DIR, validateEnvelopes, xsdUnavailableReason } from './xsd.js';

/**
 * Helpers for the operation codec tests: the shared sample envelopes, hand-written envelopes for
 * negative cases, batched XSD checks (one xmllint run per call), and the table-driven suites every
 * operation's test uses (samples, round trips, XSD validity, refusals).
 */

/** `null` when the shared samples can be read, otherwise why the sample tests are skipped. */
export const samplesUnavailableReason: string | null = existsSync(join(SAMPLES_DIR, 'v2'))
  ? null
  : `MSV3 samples not found in ${SAMPLES_DIR} (set MSV3_SAMPLES_DIR)`;

if (samplesUnavailableReason !== null) {
  console.warn(`[samples] sample decoding tests are SKIPPED: ${samplesUnavailableReason}`);
}

/** A sample envelope, e.g. `readSample('v2/lieferavisAbfrageNeu.response.xml')`. */
export function readSample(relativePath: string): string {
  return readFileSync(join(SAMPLES_DIR, relativePath), 'utf8');
}

export const V1 = 'urn:msv3:v1';
const V2 = 'urn:msv3:v2';

/** A SOAP 1.2 envelope around `payload`, with `m` bound to `ns` (any namespace, to test wrong ones). */
export function soapEnvelope(payload: string, ns: string = V2): string {
  return `<env:Envelope xmlns:env="${SOAP12_NS}" xmlns:m="${ns}"><env:Body>${payload}</env:Body></env:Envelope>`;
}

/** Asserts an `invalid` outcome whose message contains `fragment` (usually the path of the problem). */
export function expectInvalid(result: DecodeResult<unknown>, fragment: string): void {
  expect(result.kind, JSON.stringify(result)).toBe('invalid');
  if (result.kind === 'invalid') expect(result.error.message).toContain(fragment);
}

/**
 * Validates all envelopes in one xmllint run: every one of `valid` must pass the version's XSD and every
 * one of `invalid` must fail it (the negative control that proves the check can fail).
 */
async function expectSchemaVerdicts(
  version: Msv3Version,
  valid: readonly string[],
  invalid: readonly string[],
): Promise<void> {
  const results = await validateEnvelopes(version, [...valid, ...invalid]);
  const wronglyRejected = results
    .slice(0, valid.length)
    .flatMap((r, i) => (r.valid ? [] : [`${r.errors}\n${valid[i]!.slice(0, 3000)}`]));
  const wronglyAccepted = results
    .slice(valid.length)
    .flatMap((r, i) => (r.valid ? [invalid[i]!.slice(0, 3000)] : []));
  expect(wronglyRejected.slice(0, 3)).toEqual([]);
  expect(wronglyAccepted).toEqual([]);
}

// ---------------------------------------------------------------------------------------------------
// Table-driven suites shared by the operation tests

/** One version's arbitrary, or the same one for every version. */
type PerVersion<T> = Arbitrary<T> | ((version: Msv3Version) => Arbitrary<T>);

function forVersion<T>(arbitrary: PerVersion<T>, version: Msv3Version): Arbitrary<T> {
  return typeof arbitrary === 'function' ? arbitrary(version) : arbitrary;
}

/** The version of a sample by its folder: `v1/…` or `v2/…`. */
function sampleVersion(path: string): Msv3Version {
  return path.startsWith('v1/') ? 1 : 2;
}

/** What a shared sample must decode to. */
export type SampleCase<Req, Res> =
  /** The request sample, in the version of its folder, decodes to this request. */
  | { request: string; decodesTo: Req }
  /** The response sample decodes to this answer (with `expectedVersion` passed to the decoder, if given). */
  | { response: string; decodesTo: Res; expectedVersion?: Msv3Version }
  /** The response sample decodes to exactly this outcome (e.g. a fault with all its texts). */
  | { response: string; outcome: DecodeResult<Res> }
  /** The response sample is a fault with at least these fields. */
  | { response: string; faultLike: Partial<Msv3Fault> };

/** `v2/fault.server.xml` is a fault outcome of kind `ServerFault`. */
export const serverFaultSample = {
  response: 'v2/fault.server.xml',
  faultLike: { kind: 'ServerFault' },
} as const satisfies SampleCase<unknown, unknown>;

/**
 * `<name> shared samples`: one test per case, titled by its key; a function case is a test body of its
 * own. Skipped (loudly, see above) when the samples are missing.
 */
export function describeSamples<Req, Res>(
  operation: Msv3Operation<Req, Res>,
  cases: Record<string, SampleCase<Req, Res> | (() => void)>,
): void {
  describe.skipIf(samplesUnavailableReason !== null)(`${operation.name} shared samples`, () => {
    for (const [title, c] of Object.entries(cases)) {
      it(title, () => {
        if (typeof c === 'function') c();
        else if ('request' in c) {
          expect(operation.decodeRequest(readSample(c.request))).toEqual({
            kind: 'ok',
            value: { version: sampleVersion(c.request), request: c.decodesTo },
          });
        } else if ('decodesTo' in c) {
          expect(operation.decodeResponse(readSample(c.response), c.expectedVersion)).toEqual({
            kind: 'ok',
            value: c.decodesTo,
          });
        } else if ('outcome' in c) {
          expect(operation.decodeResponse(readSample(c.response))).toEqual(c.outcome);
        } else {
          const result = operation.decodeResponse(readSample(c.response));
          expect(result.kind === 'fault' && result.fault).toMatchObject(c.faultLike);
        }
      });
    }
  });
}

export interface RoundTripSpec<Req, Res> {
  /** Requests to encode and decode again. */
  request: PerVersion<Req>;
  /** Answers to encode and decode again (with the version expected); none for operations whose answer is empty. */
  response?: PerVersion<Res>;
  /** fast-check runs per property, or for both (its default when undefined). */
  numRuns?: number | { request?: number; response?: number };
  /** Titles of the two properties, where they say more than the default. */
  titles?: { request?: string; response?: string };
  /** More tests of the same describe block, per version. */
  more?: (version: Msv3Version) => void;
}

/**
 * `<name> v1/v2 round trips` (`<name> round trips (v2)` for v2-only operations): every generated
 * request and answer decodes to the model it was encoded from.
 */
export function describeRoundTrips<Req, Res>(
  operation: Msv3Operation<Req, Res>,
  spec: RoundTripSpec<Req, Res>,
): void {
  const title =
    operation.versions.length === 1
      ? `${operation.name} round trips (v2)`
      : `${operation.name} v%i round trips`;
  const runs = spec.numRuns;
  const numRuns = typeof runs === 'number' ? { request: runs, response: runs } : (runs ?? {});
  describe.each([...operation.versions])(title, (version) => {
    it(spec.titles?.request ?? 'decodes every encoded request to the same model', () => {
      fc.assert(
        fc.property(forVersion(spec.request, version), (request) => {
          expect(operation.decodeRequest(operation.encodeRequest(version, request))).toEqual({
            kind: 'ok',
            value: { version, request },
          });
        }),
        { numRuns: numRuns.request },
      );
    });

    const responses = spec.response;
    if (responses !== undefined) {
      it(spec.titles?.response ?? 'decodes every encoded response to the same model', () => {
        fc.assert(
          fc.property(forVersion(responses, version), (response) => {
            const xml = operation.encodeResponse(version, response);
            expect(operation.decodeResponse(xml, version)).toEqual({ kind: 'ok', value: response });
          }),
          { numRuns: numRuns.response },
        );
      });
    }

    spec.more?.(version);
  });
}

/** Envelopes of one version, generated by an XSD suite, that its hand-made cases may vary. */
interface GeneratedEnvelopes {
  requests: string[];
  responses: string[];
}

export interface XsdSpec<Req, Res> {
  /** The test's title (`%i` is the version). */
  title: string;
  /** How many requests and answers to generate per version (150 when undefined). */
  samples?: number;
  request?: PerVersion<Req>;
  response?: PerVersion<Res>;
  /** More envelopes that must pass (`valid`) and the broken ones that must fail the XSD (`invalid`). */
  cases: (version: Msv3Version, generated: GeneratedEnvelopes) => { valid?: string[]; invalid: string[] };
}

/**
 * `<name> against the original XSD`: per version of the operation, one xmllint run over the encoded
 * samples and the hand-made cases. Skipped (loudly) without xmllint or the XSDs.
 */
export function describeXsdValidity<Req, Res>(
  operation: Msv3Operation<Req, Res>,
  spec: XsdSpec<Req, Res>,
): void {
  describe.skipIf(xsdUnavailableReason !== null)(`${operation.name} against the original XSD`, () => {
    it.each([...operation.versions])(spec.title, async (version) => {
      const encoded = <T>(arbitrary: PerVersion<T> | undefined, encode: (value: T) => string) =>
        arbitrary === undefined
          ? []
          : fc.sample(forVersion(arbitrary, version), spec.samples ?? 150).map(encode);
      const generated: GeneratedEnvelopes = {
        requests: encoded(spec.request, (r) => operation.encodeRequest(version, r)),
        responses: encoded(spec.response, (r) => operation.encodeResponse(version, r)),
      };
      const { valid = [], invalid } = spec.cases(version, generated);
      await expectSchemaVerdicts(version, [...generated.requests, ...generated.responses, ...valid], invalid);
    });
  });
}

/** `[what, envelope, fragment]`: the envelope decodes as `invalid` with a message containing `fragment`. */
export type Refusal = readonly [what: string, envelope: string, fragment: string];

/** One test per refusal: `refuses a request with <what>` and `refuses an answer with <what>`. */
export function itRefuses<Req, Res>(
  operation: Msv3Operation<Req, Res>,
  refusals: { request?: readonly Refusal[]; response?: readonly Refusal[] },
): void {
  if (refusals.request !== undefined) {
    it.each(refusals.request)('refuses a request with %s', (_what, xml, fragment) => {
      expectInvalid(operation.decodeRequest(xml), fragment);
    });
  }
  if (refusals.response !== undefined) {
    it.each(refusals.response)('refuses an answer with %s', (_what, xml, fragment) => {
      expectInvalid(operation.decodeResponse(xml), fragment);
    });
  }
}

/** `[search, replacement, fragment]`: the base envelope, edited with `String.replace`, and what the refusal names. */
export type Variation = readonly [search: string | RegExp, replacement: string, fragment: string];

/** Every variation of `base` decodes as `invalid` with a message containing its fragment. */
export function expectRefusedVariations(
  decode: (xml: string) => DecodeResult<unknown>,
  base: string,
  variations: readonly Variation[],
): void {
  for (const [search, replacement, fragment] of variations) {
    expectInvalid(decode(base.replace(search, replacement)), fragment);
  }
}

/** Every `[input, fragment]`: `envelope(input)` decodes as `invalid` with a message containing `fragment`. */
export function expectRefusedInputs(
  decode: (xml: string) => DecodeResult<unknown>,
  envelope: (input: string) => string,
  cases: readonly (readonly [input: string, fragment: string])[],
): void {
  for (const [input, fragment] of cases) expectInvalid(decode(envelope(input)), fragment);
}
