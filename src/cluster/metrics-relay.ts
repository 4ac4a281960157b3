import { AggregatorRegistry, type Registry } from 'prom-client';
import { ApiError } from '../core/errors.js';
import { CHANNEL, type PrimaryMessage, type WorkerMessage } from './messages.js';

/**
 * `GET /metrics` of a cluster: whichever worker takes the scrape's connection answers for all of them.
 * It asks the primary, the primary asks every worker for its series (`getMetricsAsJSON`) and merges them
 * with prom-client's aggregators (counters and histograms summed, the process start time left out, the
 * Node version taken once), and the asking worker answers with that text. Without this, each scrape
 * would see one worker's counters, and rates would jump between workers.
 */

/** How long the primary waits for the workers' series; a worker that has not answered is left out. */
const COLLECT_TIMEOUT_MS = 2_000;

export interface MetricsGatherer {
  /** Worker `from` asks for everyone's metrics (`metrics-request`). */
  request(from: number, requestId: number): void;
  /** A worker's series for one round (`metrics-part`). */
  receive(from: number, roundId: number, metrics: unknown[]): void;
}

/** The primary's side. */
export function createMetricsGatherer(options: {
  liveSlots(): number[];
  send(slot: number, message: PrimaryMessage): void;
  timeoutMs?: number;
}): MetricsGatherer {
  let lastRound = 0;
  const rounds = new Map<number, { waiting: Set<number>; parts: unknown[][]; finish(): void }>();
  return {
    request(from, requestId) {
      const roundId = ++lastRound;
      const waiting = new Set(options.liveSlots());
      const parts: unknown[][] = [];
      const finish = () => {
        if (!rounds.delete(roundId)) return;
        clearTimeout(timer);
        AggregatorRegistry.aggregate(parts)
          .metrics()
          .then(
            (text) => options.send(from, { channel: CHANNEL, type: 'metrics', id: requestId, text }),
            (error: unknown) =>
              options.send(from, { channel: CHANNEL, type: 'metrics', id: requestId, error: String(error) }),
          );
      };
      const timer = setTimeout(finish, options.timeoutMs ?? COLLECT_TIMEOUT_MS);
      rounds.set(roundId, { waiting, parts, finish });
      for (const slot of waiting)
        options.send(slot, { channel: CHANNEL, type: 'metrics-collect', id: roundId });
      if (waiting.size === 0) finish();
    },
    receive(from, roundId, metrics) {
      const round = rounds.get(roundId);
      if (round === undefined || !round.waiting.delete(from)) return;
      round.parts.push(metrics);
      if (round.waiting.size === 0) round.finish();
    },
  };
}

export interface WorkerMetrics {
  /** `Metrics.exposition`: the whole cluster's metrics, through the primary. */
  exposition(): Promise<string>;
  /** The primary's `metrics-collect` and `metrics` messages. */
  receive(message: PrimaryMessage): void;
}

/** A worker's side; `registry` is its own. */
export function workerMetrics(
  registry: Registry,
  send: (message: WorkerMessage) => void,
  timeoutMs = 2 * COLLECT_TIMEOUT_MS,
): WorkerMetrics {
  let lastRequest = 0;
  const waiting = new Map<number, (answer: { text?: string; error?: string }) => void>();
  return {
    exposition() {
      const id = ++lastRequest;
      return new Promise<string>((resolve, reject) => {
        const fail = (why: string) =>
          reject(
            new ApiError(
              'service_unavailable',
              `The metrics of the workers could not be collected: ${why}.`,
              {
                retryAfter: 1,
              },
            ),
          );
        const timer = setTimeout(() => {
          waiting.delete(id);
          fail('the primary did not answer in time');
        }, timeoutMs);
        waiting.set(id, (answer) => {
          clearTimeout(timer);
          waiting.delete(id);
          if (answer.text === undefined) fail(answer.error ?? 'no answer');
          else resolve(answer.text);
        });
        send({ channel: CHANNEL, type: 'metrics-request', id });
      });
    },
    receive(message) {
      if (message.type === 'metrics-collect') {
        registry.getMetricsAsJSON().then(
          (metrics) => send({ channel: CHANNEL, type: 'metrics-part', id: message.id, metrics }),
          () => send({ channel: CHANNEL, type: 'metrics-part', id: message.id, metrics: [] }),
        );
      } else if (message.type === 'metrics') {
        waiting.get(message.id)?.(message);
      }
    },
  };
}
