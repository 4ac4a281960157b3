import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny OTLP/HTTP collector on 127.0.0.1 for tracing tests: it takes `POST /v1/traces` in the JSON
 * encoding (what @opentelemetry/exporter-trace-otlp-http sends), keeps every request as received, and
 * flattens the spans for assertions.
 */

type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, AttributeValue>;
}

interface ReceivedExport {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  exports: ReceivedExport[];
  spans(): ReceivedSpan[];
  /** Resolves once `predicate` holds for the spans received (checked on every export), or rejects after `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface JsonKeyValue {
  key: string;
  value: Record<string, unknown>;
}

interface JsonExport {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: JsonKeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exports.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const spans = () => exports.flatMap((received) => spansOf(JSON.parse(received.body) as JsonExport));
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans,
    waitFor(predicate, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const current = spans();
          if (!predicate(current)) return;
          done();
          resolve(current);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the expected spans did not arrive within ${timeoutMs} ms: ${describe(spans())}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function spansOf(body: JsonExport): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: hexId(span.traceId),
        spanId: hexId(span.spanId),
        parentSpanId: span.parentSpanId ? hexId(span.parentSpanId) : '',
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        statusCode: span.status?.code ?? 0,
        resource,
      })),
    );
  });
}

/** OTLP JSON carries ids as hex; base64 (the protobuf-JSON default) is converted, just in case. */
function hexId(id: string): string {
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

function attributesOf(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if ('stringValue' in value) attributes[key] = String(value.stringValue);
    else if ('boolValue' in value) attributes[key] = Boolean(value.boolValue);
    else if ('intValue' in value) attributes[key] = Number(value.intValue);
    else if ('doubleValue' in value) attributes[key] = Number(value.doubleValue);
  }
  return attributes;
}

function describe(spans: ReceivedSpan[]): string {
  return JSON.stringify(spans.map((span) => ({ name: span.name, traceId: span.traceId })));
}
