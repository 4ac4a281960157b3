import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';
import {
  createWholesalerMetrics,
  type WholesalerMetrics,
  type WholesalerStatus,
} from './wholesaler-metrics.js';

/** One registry per app, so two apps in one process (tests) never share series. */
export interface Metrics {
  registry: Registry;
  /** The text `GET /metrics` answers; by default the registry's. A cluster worker's covers every worker. */
  exposition?: () => Promise<string>;
  /** Updated on every request: their series are found by key (series-metrics.ts). */
  httpRequests: SeriesCounter<'method' | 'route' | 'status'>;
  httpDuration: SeriesHistogram<'method' | 'route' | 'status'>;
  /** Wholesaler calls, circuits and probes (`wholesaler-metrics.ts`). */
  wholesalers: WholesalerMetrics;
  /** What the status page shows of the wholesalers; by default this process's. A cluster worker's covers every worker. */
  wholesalerStatus?: () => Promise<WholesalerStatus>;
  /** Wholesaler answers accepted with a tolerated schema deviation (`answerDeviationsCounter`). */
  answerDeviations: Counter<'wholesaler' | 'deviation'>;
}

export function createMetrics(options: { processMetrics?: boolean; now?: () => number } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  return {
    registry,
    httpRequests: new SeriesCounter({
      name: 'msv3_gateway_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status.',
      labelNames,
      registers: [registry],
    }),
    httpDuration: new SeriesHistogram({
      name: 'msv3_gateway_http_request_duration_seconds',
      help: 'Time from request start to response end, by route pattern, method and status.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    wholesalers: createWholesalerMetrics(registry, options.now === undefined ? {} : { now: options.now }),
    answerDeviations: answerDeviationsCounter(registry),
  };
}

/**
 * Answers a wholesaler sent with a schema deviation the gateway tolerated (MSV3_TOLERATE_DEVIATIONS,
 * docs/msv3.md "Tolerated deviations"): one per answer and deviation, `wholesaler` labelled as in the call
 * metrics (the catalogue id, `custom` for every customer-registered one).
 */
function answerDeviationsCounter(registry: Registry): Counter<'wholesaler' | 'deviation'> {
  return new Counter({
    name: 'msv3_gateway_wholesaler_answer_deviations_total',
    help: 'Wholesaler answers accepted with a tolerated MSV3 schema deviation, by wholesaler (catalogue id or custom) and deviation.',
    labelNames: ['wholesaler', 'deviation'],
    registers: [registry],
  });
}
