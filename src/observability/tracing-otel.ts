import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { RequestSpan, SpanAttributes, TraceSpan, Tracing, TracingDeps } from './tracing.js';

/**
 * The OpenTelemetry side of `Tracing`, loaded by `startTracing` only when an endpoint is configured.
 * Everything is passed explicitly: `@opentelemetry/sdk-trace` reads no environment variable (unlike the
 * `sdk-trace-base` shim), nothing is registered globally (no global tracer provider, propagator or context
 * manager), and nothing is monkey-patched. The request span reaches the wholesaler-call spans through this
 * instance's own AsyncLocalStorage (`RequestSpan.run`).
 */

export type OtelSettings = Config['tracing'] & { endpoint: string };

/** At shutdown the last spans get this long to reach the collector, within the shutdown's grace. */
const CLOSE_LIMIT_MS = 500;
const DEFAULT_SERVICE_NAME = 'msv3-gateway';

type ExporterConfig = NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>;

export function createOtelTracing(settings: OtelSettings, deps: TracingDeps): Tracing {
  const exporter = new OTLPTraceExporter({
    url: tracesUrl(settings.endpoint),
    headers: parseKeyValueList(settings.headers),
    timeoutMillis: settings.timeoutMs,
    // Given, so the exporter does not fall back to OTEL_EXPORTER_OTLP_COMPRESSION.
    compression: 'none' as ExporterConfig['compression'],
  });
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes(resourceAttributes(settings, deps.version))),
    sampler: samplerFor(settings),
    spanProcessors: [
      // The specification's defaults, given explicitly (OTEL_BSP_* are not read).
      new BatchSpanProcessor({
        exporter: reportingFailures(exporter, deps.logger),
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 5_000,
        exportTimeoutMillis: 30_000,
      }),
    ],
  });
  const tracer = provider.getTracer('msv3-gateway', deps.version);
  const propagator = new W3CTraceContextPropagator();
  const activeRequest = new AsyncLocalStorage<Context>();

  return {
    enabled: true,
    startRequest(name, headers, attributes): RequestSpan {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: defined(attributes) }, parent);
      const context = trace.setSpan(parent, span);
      const { traceId, spanId, traceFlags } = span.spanContext();
      return {
        ...handleOf(span),
        traceId,
        traceResponse: `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`,
        run: (fn) => activeRequest.run(context, fn),
      };
    },
    startCall(name, attributes) {
      const parent = activeRequest.getStore() ?? ROOT_CONTEXT;
      return handleOf(
        tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: defined(attributes) }, parent),
      );
    },
    flush: () => provider.forceFlush(),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), CLOSE_LIMIT_MS);
        timer.unref();
      });
      const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const), limit]);
      clearTimeout(timer);
      if (outcome === 'late')
        deps.logger.warn({ limit_ms: CLOSE_LIMIT_MS }, 'last spans not exported in time');
    },
  };
}

function handleOf(span: Span): TraceSpan {
  let ended = false;
  return {
    setAttributes(attributes) {
      if (!ended) span.setAttributes(defined(attributes));
    },
    fail(description) {
      if (!ended) span.setStatus({ code: SpanStatusCode.ERROR, message: description });
    },
    end() {
      if (ended) return;
      ended = true;
      span.end();
    },
  };
}

/** OpenTelemetry refuses `undefined` values (with a diagnostic); they mean "not applicable" here. */
function defined(attributes: SpanAttributes): Attributes {
  const result: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) result[key] = value;
  return result;
}

/** OTEL_EXPORTER_OTLP_ENDPOINT is a base URL: each signal appends its path (`v1/traces`). */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** `key=value,key=value` (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES); values percent-decoded. */
export function parseKeyValueList(text: string | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const pair of text?.split(',') ?? []) {
    const equals = pair.indexOf('=');
    if (equals <= 0) continue;
    const key = pair.slice(0, equals).trim();
    if (key !== '') result[key] = percentDecoded(pair.slice(equals + 1).trim());
  }
  return result;
}

function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** OTEL_SERVICE_NAME wins over a `service.name` in OTEL_RESOURCE_ATTRIBUTES (the specification's rule). */
function resourceAttributes(settings: OtelSettings, version: string): Record<string, string> {
  const given = parseKeyValueList(settings.resourceAttributes);
  return {
    ...given,
    'service.name': settings.serviceName ?? given['service.name'] ?? DEFAULT_SERVICE_NAME,
    'service.version': given['service.version'] ?? version,
  };
}

function samplerFor(settings: OtelSettings): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(settings.samplerArg);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}

/**
 * The exporter, logging when exports start failing and when they work again (once each, not per batch):
 * the SDK itself reports failures only to its global diagnostics logger, which nobody reads.
 */
function reportingFailures(exporter: SpanExporter, logger: Logger): SpanExporter {
  let failing = false;
  return {
    export(spans, resultCallback) {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          if (failing) logger.info('trace export works again');
          failing = false;
        } else if (!failing) {
          failing = true;
          // The message only (a status text or a network error code), never the collector's answer.
          logger.warn({ reason: result.error?.message }, 'trace export failed');
        }
        resultCallback(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
