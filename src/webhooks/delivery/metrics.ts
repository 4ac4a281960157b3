import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface WebhookMetrics {
  attempts: Counter<'outcome' | 'trigger'>;
  attemptDuration: Histogram<'outcome'>;
  /** Event recorded → first attempt started. */
  firstAttemptDelay: Histogram;
  /** Event recorded → delivered (retries included). */
  deliveryLatency: Histogram;
}

/** Registers the webhook series on the app's registry; `queueDepth` is read at scrape time. */
export function createWebhookMetrics(registry: Registry, queueDepth: () => Promise<number>): WebhookMetrics {
  new Gauge({
    name: 'msv3_gateway_webhook_queue_depth',
    help: 'Webhook deliveries waiting for an attempt (due now or scheduled for a retry).',
    registers: [registry],
    // Every worker counts the same rows of the one database: the cluster's value is one count, not the sum.
    aggregator: 'max',
    async collect() {
      this.set(await queueDepth().catch(() => Number.NaN));
    },
  });
  return {
    attempts: new Counter({
      name: 'msv3_gateway_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (`success` or the failure class) and trigger.',
      labelNames: ['outcome', 'trigger'],
      registers: [registry],
    }),
    attemptDuration: new Histogram({
      name: 'msv3_gateway_webhook_attempt_duration_seconds',
      help: 'Duration of one webhook delivery attempt, by outcome.',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    firstAttemptDelay: new Histogram({
      name: 'msv3_gateway_webhook_first_attempt_delay_seconds',
      help: 'Time from an event being recorded to the first delivery attempt starting.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'msv3_gateway_webhook_delivery_latency_seconds',
      help: 'Time from an event being recorded to its successful delivery, retries included.',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 300, 1800, 7200, 36000, 86400, 259200],
      registers: [registry],
    }),
  };
}
