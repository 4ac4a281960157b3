import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../../test/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { createAnswerDeviations } from './answer-deviations.js';
import type { Target } from './target.js';

const live: Target = { wholesaler: 'phoenix', route: 'live', accountId: null, custom: false };
const custom: Target = { wholesaler: 'custom-nord-3f9a1c', route: 'live', accountId: 'acct_1', custom: true };

describe('answer deviations', () => {
  it('counts every answer by metric label, logs the first of each deviation per target once, lists them per target', async () => {
    const metrics = createMetrics();
    const log = capturingLogger();
    const deviations = createAnswerDeviations({ counter: metrics.answerDeviations, logger: log.logger });
    const phoenix = { key: 'phoenix', target: live, label: 'phoenix' };
    const nord = { key: 'custom/acct_1/custom-nord-3f9a1c', target: custom, label: 'custom' };
    deviations.record(phoenix, 'vertragsdatenAbfragen', ['qualified_return']);
    deviations.record(phoenix, 'verfuegbarkeitAnfragen', ['qualified_return', 'undeclared_xsi_prefix']);
    deviations.record(phoenix, 'bestellen', ['undeclared_xsi_prefix']);
    deviations.record(nord, 'bestellen', ['qualified_return']);

    expect(deviations.seen('phoenix')).toEqual([
      {
        deviation: 'qualified_return',
        description: expect.stringContaining('`return`'),
        first_seen_in: 'vertragsdatenAbfragen',
      },
      {
        deviation: 'undeclared_xsi_prefix',
        description: expect.stringContaining('xsi:nil'),
        first_seen_in: 'verfuegbarkeitAnfragen',
      },
    ]);
    expect(deviations.seen('custom/acct_1/custom-nord-3f9a1c').map((d) => d.deviation)).toEqual([
      'qualified_return',
    ]);
    expect(deviations.seen('phoenix_test')).toEqual([]);

    expect(log.lines.map((line) => line.level)).toEqual(['warn', 'warn', 'warn']);
    expect(log.lines).toEqual([
      expect.objectContaining({
        wholesaler: 'phoenix',
        operation: 'vertragsdatenAbfragen',
        deviation: 'qualified_return',
      }),
      expect.objectContaining({
        wholesaler: 'phoenix',
        operation: 'verfuegbarkeitAnfragen',
        deviation: 'undeclared_xsi_prefix',
      }),
      expect.objectContaining({
        wholesaler: 'custom-nord-3f9a1c',
        route: 'live',
        deviation: 'qualified_return',
      }),
    ]);
    expect(log.lines[0]!.msg).toContain('MSV3_TOLERATE_DEVIATIONS');

    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'msv3_gateway_wholesaler_answer_deviations_total{wholesaler="phoenix",deviation="qualified_return"} 2',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_answer_deviations_total{wholesaler="phoenix",deviation="undeclared_xsi_prefix"} 2',
    );
    expect(text).toContain(
      'msv3_gateway_wholesaler_answer_deviations_total{wholesaler="custom",deviation="qualified_return"} 1',
    );
  });
});
