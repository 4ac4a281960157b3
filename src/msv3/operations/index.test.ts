import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEnvelope } from '../envelope.js';
import { readSample, samplesUnavailableReason } from '../test-support/codec-test-kit.js';
import { SAMPLES_DIR } from '../test-support/xsd.js';
import { bestellen, operationByRequestName, operations, verfuegbarkeitAnfragen } from './index.js';

describe('operation registry', () => {
  it('finds an operation by its request wrapper name, optionally per version', () => {
    expect(operationByRequestName('bestellen')).toBe(bestellen);
    expect(operationByRequestName('verfuegbarkeitAnfragen', 1)).toBe(verfuegbarkeitAnfragen);
    expect(operationByRequestName('bestellenResponse')).toBeUndefined();
    expect(operationByRequestName('__proto__')).toBeUndefined();
  });

  it('hides v2-only operations from v1 lookups', () => {
    const v2Only = operations.filter((op) => !op.versions.includes(1));
    for (const op of v2Only) {
      expect(operationByRequestName(op.name, 1)).toBeUndefined();
      expect(operationByRequestName(op.name, 2)).toBe(op);
    }
  });

  it('registers each operation name once', () => {
    expect(new Set(operations.map((op) => op.name)).size).toBe(operations.length);
  });
});

describe.skipIf(samplesUnavailableReason !== null)(
  'dispatching the shared request samples like the mock does',
  () => {
    // The body of a skipped describe still runs (to name its tests): read nothing when samples are missing.
    const versions = samplesUnavailableReason === null ? ['v1', 'v2'] : [];
    if (samplesUnavailableReason !== null) it.skip(`skipped: ${samplesUnavailableReason}`, () => {});
    const requests = versions.flatMap((v) =>
      readdirSync(join(SAMPLES_DIR, v))
        .filter((f) => f.includes('.request.'))
        .map((f) => `${v}/${f}`),
    );

    it.each(requests)('decodes %s with the operation named by its body root', (file) => {
      const xml = readSample(file);
      const opened = openEnvelope(xml);
      if (opened.kind !== 'ok') throw new Error(`sample does not open: ${JSON.stringify(opened)}`);
      const op = operationByRequestName(opened.value.element.local, opened.value.version);
      expect(op?.name).toBe(opened.value.element.local);
      expect(op!.decodeRequest(xml)).toMatchObject({ kind: 'ok', value: { version: opened.value.version } });
    });
  },
);
