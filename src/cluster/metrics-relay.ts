import { AggregatorRegistry, type Registry } from 'prom-client';
import { ApiError } from '../core/errors.js';
import { mergeWholesalerStatus, type WholesalerStatus } from '../observability/wholesaler-metrics.js';
import { CHANNEL, type PrimaryMessage, type WorkerMessage } from './messages.js';

/**
 * `GET /metrics` of a cluster: whichever worker takes the scrape's connection answers for all of them.
 * It asks the primary, the primary asks every worker for its series (`getMetricsAsJSON`) and merges them
 * with prom-client's aggregators (counters and histograms summed, the process start time left out, the
 * Node version taken once), and the asking worker answers with that text. Without this, each scrape
 * would see one worker's counters, and rates would jump between workers.
 *
 * The operator status page's wholesaler view (calls of the last hour, circuits, probes) travels the same
 * way: the primary hands the asking worker every worker's view, which it merges
 * (`mergeWholesalerStatus`).
 */

/** How long the primary waits for the workers' parts; a worker that has not answered is left out. */
const COLLECT_TIMEOUT_MS = 2_000;

/** What a round collects: the metric series, or the wholesaler views. */
type Collected = 'metrics' | 'wholesalers';

export interface MetricsGatherer {
  /** Worker `from` asks for everyone's metrics (`metrics-request`) or wholesaler views (`wholesalers-request`). */
  request(from: number, requestId: number, what?: Collected): void;
  /** A worker's part of one round (`metrics-part`, `wholesalers-part`). */
  receive(from: number, roundId: number, part: unknown): void;
  /** Worker `slot` exited: its parts will not come, so no round waits for them. */
  gone(slot: number): void;
}

/**
 * The primary's side. A round asks the workers that have joined (supervisor.ts `joinedSlots`): one still
 * loading its modules has nothing to count yet, and waiting for it would hold every scrape during a
 * worker's restart until the timeout.
 */
export function createMetricsGatherer(options: {
  joinedSlots(): number[];
  send(slot: number, message: PrimaryMessage): void;
  timeoutMs?: number;
}): MetricsGatherer {
  let lastRound = 0;
  const rounds = new Map<number, { waiting: Set<number>; parts: unknown[]; finish(): void }>();

  function answer(to: number, requestId: number, what: Collected, parts: unknown[]): void {
    if (what === 'wholesalers') {
      options.send(to, { channel: CHANNEL, type: 'wholesalers', id: requestId, parts });
      return;
    }
    AggregatorRegistry.aggregate(parts as Parameters<typeof AggregatorRegistry.aggregate>[0])
      .metrics()
      .then(
        (text) => options.send(to, { channel: CHANNEL, type: 'metrics', id: requestId, text }),
        (error: unknown) =>
          options.send(to, { channel: CHANNEL, type: 'metrics', id: requestId, error: String(error) }),
      );
  }

  return {
    request(from, requestId, what = 'metrics') {
      const roundId = ++lastRound;
      const waiting = new Set(options.joinedSlots());
      const parts: unknown[] = [];
      const finish = () => {
        if (!rounds.delete(roundId)) return;
        clearTimeout(timer);
        answer(from, requestId, what, parts);
      };
      const timer = setTimeout(finish, options.timeoutMs ?? COLLECT_TIMEOUT_MS);
      rounds.set(roundId, { waiting, parts, finish });
      const type = what === 'metrics' ? 'metrics-collect' : 'wholesalers-collect';
      for (const slot of waiting) options.send(slot, { channel: CHANNEL, type, id: roundId });
      if (waiting.size === 0) finish();
    },
    receive(from, roundId, part) {
      const round = rounds.get(roundId);
      if (round === undefined || !round.waiting.delete(from)) return;
      round.parts.push(part);
      if (round.waiting.size === 0) round.finish();
    },
    gone(slot) {
      for (const round of rounds.values())
        if (round.waiting.delete(slot) && round.waiting.size === 0) round.finish();
    },
  };
}

export interface WorkerMetrics {
  /** `Metrics.exposition`: the whole cluster's metrics, through the primary. */
  exposition(): Promise<string>;
  /** `Metrics.wholesalerStatus`: every worker's wholesaler view, merged. */
  wholesalerStatus(): Promise<WholesalerStatus>;
  /** The primary's `*-collect` and answer messages. */
  receive(message: PrimaryMessage): void;
}

/** A worker's side; `registry` and `ownStatus` are its own. */
export function workerMetrics(
  registry: Registry,
  send: (message: WorkerMessage) => void,
  timeoutMs = 2 * COLLECT_TIMEOUT_MS,
  ownStatus?: () => WholesalerStatus,
): WorkerMetrics {
  let lastRequest = 0;
  const waiting = new Map<number, (answer: PrimaryMessage) => void>();

  function unavailable(what: string, why: string): ApiError {
    return new ApiError('service_unavailable', `The ${what} of the workers could not be collected: ${why}.`, {
      retryAfter: 1,
    });
  }

  /** Asks the primary; resolves with its answer, or fails as 503 when none comes in time. */
  function ask(type: 'metrics-request' | 'wholesalers-request', what: string): Promise<PrimaryMessage> {
    const id = ++lastRequest;
    return new Promise<PrimaryMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(unavailable(what, 'the primary did not answer in time'));
      }, timeoutMs);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(answer);
      });
      send({ channel: CHANNEL, type, id });
    });
  }

  return {
    async exposition() {
      const answer = await ask('metrics-request', 'metrics');
      if (answer.type === 'metrics' && answer.text !== undefined) return answer.text;
      throw unavailable('metrics', (answer.type === 'metrics' && answer.error) || 'no answer');
    },
    async wholesalerStatus() {
      const answer = await ask('wholesalers-request', 'wholesaler status');
      const parts = answer.type === 'wholesalers' ? answer.parts : [];
      return mergeWholesalerStatus(parts.filter((part): part is WholesalerStatus => part !== null));
    },
    receive(message) {
      switch (message.type) {
        case 'metrics-collect':
          registry.getMetricsAsJSON().then(
            (metrics) => send({ channel: CHANNEL, type: 'metrics-part', id: message.id, metrics }),
            () => send({ channel: CHANNEL, type: 'metrics-part', id: message.id, metrics: [] }),
          );
          return;
        case 'wholesalers-collect': {
          let status: WholesalerStatus | undefined;
          try {
            status = ownStatus?.();
          } catch {
            status = undefined;
          }
          send({ channel: CHANNEL, type: 'wholesalers-part', id: message.id, status: status ?? null });
          return;
        }
        case 'metrics':
        case 'wholesalers':
          waiting.get(message.id)?.(message);
          return;
      }
    },
  };
}
