import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { type DeviationName, TOLERATED_DEVIATIONS } from '../msv3/deviations.js';
import type { Target } from './target.js';

/**
 * The schema deviations this process has tolerated in wholesaler answers (MSV3_TOLERATE_DEVIATIONS,
 * docs/msv3.md "Tolerated deviations"), so that the operator can tell the wholesaler: every answer
 * with one is counted (`msv3_gateway_wholesaler_answer_deviations_total`, by the wholesaler's metric
 * label and the deviation), the first of each deviation per target is logged with the wholesaler's id, and the connection test lists what a
 * target's answers had. Kept per target (an endpoint: a catalogue wholesaler's server, or one
 * account's custom or sandbox wholesaler), so an account sees only what its own endpoints answered.
 */
export interface AnswerDeviations {
  /** Notes the deviations of one answer of `operation` from a target. */
  record(about: AnsweringTarget, operation: string, deviations: readonly DeviationName[]): void;
  /** What the target's answers have had since this process started, first seen first. */
  seen(targetKey: string): ToleratedDeviation[];
}

/** The target that answered: its key, itself, and its `wholesaler` label in metrics. */
interface AnsweringTarget {
  key: string;
  target: Target;
  /**
   * The catalogue id as clients use it, or `custom` for every customer-registered wholesaler, as the
   * wholesaler call metrics label them (docs/observability.md): per-account ids would make the series
   * grow with the customers. The log line and the connection test name the wholesaler itself.
   */
  label: string;
}

export interface ToleratedDeviation {
  deviation: DeviationName;
  /** What is wrong, in words the wholesaler can act on. */
  description: string;
  /** The MSV3 operation whose answer had it first. */
  first_seen_in: string;
}

export interface AnswerDeviationsDeps {
  counter: Counter<'wholesaler' | 'deviation'>;
  logger: Logger;
}

export function createAnswerDeviations(deps: AnswerDeviationsDeps): AnswerDeviations {
  const byTarget = new Map<string, Map<DeviationName, ToleratedDeviation>>();
  return {
    record({ key, target, label }, operation, deviations) {
      let seen = byTarget.get(key);
      for (const deviation of deviations) {
        deps.counter.inc({ wholesaler: label, deviation });
        if (seen?.has(deviation)) continue;
        if (seen === undefined) {
          seen = new Map();
          byTarget.set(key, seen);
        }
        const description = TOLERATED_DEVIATIONS[deviation];
        seen.set(deviation, { deviation, description, first_seen_in: operation });
        deps.logger.warn(
          { wholesaler: target.wholesaler, route: target.route, operation, deviation, description },
          'wholesaler answer deviates from the MSV3 schema; tolerated (MSV3_TOLERATE_DEVIATIONS), first time for this wholesaler',
        );
      }
    },
    seen: (targetKey) => [...(byTarget.get(targetKey)?.values() ?? [])],
  };
}
