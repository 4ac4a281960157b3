import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';

/**
 * The gateway's view of tracing (docs/tracing.md): a server span per request and a client span per
 * wholesaler call. The OpenTelemetry SDK lives behind this interface in `tracing-otel.ts`, loaded only
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it the gateway runs with `NO_TRACING` and loads no
 * OpenTelemetry module at all.
 *
 * Attribute values are set by the gateway's own code, never copied from headers or bodies wholesale:
 * no API key, MSV3 user name or password, fault text or URL with credentials ever becomes one.
 */

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed (status ERROR); `description` is a kind or reason, never free text. */
  fail(description: string): void;
  /** Ends the span; later calls do nothing. */
  end(): void;
}

export interface RequestSpan extends TraceSpan {
  /** 32 hex digits: the caller's trace (from `traceparent`) or a new one. */
  readonly traceId: string;
  /** The W3C `traceresponse` header value: `00-<trace id>-<span id>-<flags>`. */
  readonly traceResponse: string;
  /** Runs `fn` (and what it starts asynchronously) with this span as the parent of `startCall` spans. */
  run<T>(fn: () => T): T;
}

export interface Tracing {
  /** False for `NO_TRACING`: no hooks are installed and wholesaler calls are not wrapped. */
  readonly enabled: boolean;
  /** A server span; a valid `traceparent` (and `tracestate`) in `headers` makes it continue that trace. */
  startRequest(name: string, headers: IncomingHttpHeaders, attributes: SpanAttributes): RequestSpan;
  /** A client span, child of the request span whose `run` this code is in (outside one: a new trace). */
  startCall(name: string, attributes: SpanAttributes): TraceSpan;
  /** Sends the spans ended so far. */
  flush(): Promise<void>;
  /** Sends what is left (for a bounded time, `CLOSE_LIMIT_MS`) and stops. */
  close(): Promise<void>;
}

const NO_SPAN: RequestSpan = {
  traceId: '',
  traceResponse: '',
  setAttributes: () => {},
  fail: () => {},
  end: () => {},
  run: (fn) => fn(),
};

/** Tracing off: nothing is recorded, nothing is loaded. */
export const NO_TRACING: Tracing = {
  enabled: false,
  startRequest: () => NO_SPAN,
  startCall: () => NO_SPAN,
  flush: async () => {},
  close: async () => {},
};

export interface TracingDeps {
  logger: Logger;
  /** The gateway's version, for `service.version`. */
  version: string;
}
