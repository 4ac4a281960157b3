import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type Msv3Version, SOAP12_NS } from '../envelope.js';
import type { DecodeResult } from '../result.js';
import { SAMPLES_DIR, validateEnvelopes, xsdUnavailableReason } from './xsd.js';

/**
 * Helpers for the codec tests of the contract, take-back, delivery-notice, return and document
 * operations: the shared sample envelopes, hand-written envelopes for negative cases, and batched XSD
 * checks (one xmllint run per call).
 */

/** `null` when the shared samples can be read, otherwise why the sample tests are skipped. */
export const samplesUnavailableReason: string | null = existsSync(join(SAMPLES_DIR, 'v2'))
  ? null
  : `MSV3 samples not found in ${SAMPLES_DIR} (set MSV3_SAMPLES_DIR)`;

if (samplesUnavailableReason !== null) {
  console.warn(`[samples] sample decoding tests are SKIPPED: ${samplesUnavailableReason}`);
}

export { xsdUnavailableReason };

/** A sample envelope, e.g. `readSample('v2/lieferavisAbfrageNeu.response.xml')`. */
export function readSample(relativePath: string): string {
  return readFileSync(join(SAMPLES_DIR, relativePath), 'utf8');
}

export const V1 = 'urn:msv3:v1';
export const V2 = 'urn:msv3:v2';

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
export async function expectSchemaVerdicts(
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
