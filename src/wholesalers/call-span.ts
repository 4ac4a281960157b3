import { isApiError } from '../core/errors.js';
import type { CallResult } from '../msv3/transport.js';
import type { UpstreamError } from '../msv3/upstream-error.js';
import type { SpanAttributes, Tracing } from '../observability/tracing.js';
import type { ResolvedWholesaler } from './registry.js';

/**
 * `call` inside a client span `msv3 <operation>` (docs/tracing.md), a child of the request's span. What it
 * records is the gateway's own classification of the call: wholesaler id and route, operation, outcome
 * (`ok` or the `UpstreamError` reason), the wholesaler's HTTP status, the MSV3 fault kind and code, the
 * transport's duration. Never credentials, the MSV3 user name, fault texts (a wholesaler may quote the
 * customer number in them) or URLs: of the endpoint only host and port.
 */
export async function inCallSpan<T>(
  tracing: Tracing,
  wholesaler: ResolvedWholesaler,
  operation: string,
  call: () => Promise<CallResult<T>>,
): Promise<CallResult<T>> {
  const span = tracing.startCall(`msv3 ${operation}`, {
    'msv3.wholesaler': wholesaler.id,
    'msv3.route': wholesaler.route,
    'msv3.operation': operation,
    'msv3.version': wholesaler.version,
    ...serverOf(wholesaler.endpoint.baseUrl),
  });
  try {
    const result = await call();
    span.setAttributes({ 'msv3.duration_ms': Math.round(result.latencyMs * 10) / 10 });
    if (result.ok) {
      span.setAttributes({ 'msv3.outcome': 'ok', 'http.response.status_code': result.status });
    } else {
      span.setAttributes(failureAttributes(result.error));
      span.fail(result.error.reason);
    }
    return result;
  } catch (error) {
    // The caller gave up (an abort) or the call was refused before any I/O: the error's class only.
    const type = isApiError(error) ? error.kind : error instanceof Error ? error.name : 'unknown';
    span.setAttributes({ 'msv3.outcome': 'error', 'error.type': type });
    span.fail(type);
    throw error;
  } finally {
    span.end();
  }
}

function failureAttributes(error: UpstreamError): SpanAttributes {
  return {
    'msv3.outcome': error.reason,
    'error.type': error.reason,
    'msv3.maybe_delivered': error.maybeDelivered,
    'http.response.status_code': 'status' in error ? error.status : undefined,
    'msv3.fault_kind': error.reason === 'soap_fault' ? error.fault.kind : undefined,
    'msv3.fault_code': error.reason === 'soap_fault' ? error.fault.errorCode : undefined,
    'msv3.timeout_phase': error.reason === 'timeout' ? error.phase : undefined,
    'msv3.network_error': error.reason === 'unreachable' ? error.code : undefined,
  };
}

function serverOf(baseUrl: string): SpanAttributes {
  try {
    const url = new URL(baseUrl);
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    return { 'server.address': url.hostname, 'server.port': port };
  } catch {
    return {};
  }
}
