import { errorKindOf } from '../core/errors.js';
import type { Metrics } from '../observability/metrics.js';
import { callLogFields, installRequestNotes, noteErrorKind } from './request-notes.js';
import type { GatewayApp } from './types.js';

/** Methods kept as they are in labels and span attributes; any other becomes `OTHER` (spans: `_OTHER`). */
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
]);

/**
 * One log line and one metric sample per response, labelled by route pattern (never the raw URL). The
 * line tells failures apart (docs/observability.md "Logs"): who called (account, key id, mode), the
 * error kind answered, and the wholesaler calls made (wholesaler, operations, their time, the first
 * failure). Never a key, a password or a request's contents.
 */
export function installObservation(app: GatewayApp, deps: { metrics: Metrics }): void {
  installRequestNotes(app);
  // Error answers that did not pass the error handler (an idempotent replay, say): read from the body.
  // Callback hooks, not async ones: no promise and no microtask hop on every request.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && request.notes?.errorKind === undefined) {
      const kind = errorKindOf(reply.statusCode, payload);
      if (kind !== undefined) noteErrorKind(request, kind);
    }
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const method = KNOWN_METHODS.has(request.method) ? request.method : 'OTHER';
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    const status = reply.statusCode;
    // The series' key: the label values joined (neither a method nor a status holds a space).
    const series = `${method} ${route} ${status}`;
    const labelsOf = () => ({ method, route, status: String(status) });
    deps.metrics.httpRequests.incSeries(series, labelsOf);
    deps.metrics.httpDuration.observeSeries(series, labelsOf, reply.elapsedTime / 1000);
    // `auth` is null on public routes and on requests refused before the key was checked. Fields are
    // added one by one rather than spread in: a spread into a literal goes through V8's runtime on Node 20.
    const line: Record<string, unknown> = {
      req: request,
      res: reply,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    const auth = request.auth;
    if (auth !== null) {
      line.account_id = auth.accountId;
      line.key_id = auth.keyId;
      line.mode = auth.mode;
    }
    const notes = request.notes;
    if (notes !== null) {
      if (notes.errorKind !== undefined) line.error_kind = notes.errorKind;
      Object.assign(line, callLogFields(notes.calls));
    }
    request.log.info(line, 'request completed');
    done();
  });
}
