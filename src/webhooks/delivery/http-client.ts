import { Agent, type Dispatcher } from 'undici';
import { type AddressPolicy, checkUrlShape, type HostLookup } from '../../lib/address-policy.js';
import { type ConnectPolicy, createGuardedConnector } from '../../lib/guarded-connector.js';
import { parseRetryAfter } from '../../lib/retry-after.js';

/** Why an attempt failed; stored in the attempt log and used as the metric label. */
type FailureClass =
  | 'http_status'
  | 'redirect'
  | 'gone'
  | 'timeout'
  | 'connection_refused'
  | 'dns'
  | 'blocked'
  | 'tls'
  | 'network'
  | 'invalid_url';

export type SendResult =
  | { ok: true; status: number; durationMs: number }
  | {
      ok: false;
      failure: FailureClass;
      message: string;
      status?: number;
      /** From Retry-After on 429/503. */
      retryAfterMs?: number;
      durationMs: number;
    };

interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Live subscriptions with an http:// URL (allowed only to private addresses) must stay private. */
  live: boolean;
}

export interface WebhookHttpClientOptions {
  /** A 2xx must arrive within this time (connect included). */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** The gateway's outbound address policy (ALLOW_PRIVATE_ENDPOINTS, ALLOWED_PRIVATE_CIDRS). */
  addressPolicy: AddressPolicy;
  /** Keep-alive connections per receiver origin. */
  connectionsPerOrigin: number;
  lookup?: HostLookup;
  /** For `Retry-After` dates. */
  now?: () => number;
}

export interface WebhookHttpClient {
  send(request: WebhookRequest, signal?: AbortSignal): Promise<SendResult>;
  close(): Promise<void>;
}

const RESPONSE_BYTES_READ = 64 * 1024;

/**
 * POSTs webhook deliveries. Every connection is made by a connector that resolves the host and connects
 * only to an address the policy allows, so the checked address is the connected one. Redirects are not
 * followed. Response bodies are read (to reuse the connection) but never kept: showing them would let a
 * subscriber read what an internal endpoint answers.
 */
export function createWebhookHttpClient(options: WebhookHttpClientOptions): WebhookHttpClient {
  const policy = options.addressPolicy;
  const agentFor = (connectPolicy: ConnectPolicy) =>
    new Agent({
      connect: createGuardedConnector({
        connectTimeoutMs: options.connectTimeoutMs,
        policy: connectPolicy,
        ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
      }),
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 4_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  const standard = agentFor(policy);
  // Plain http in live mode is admitted only towards private addresses, and only those the policy allows.
  const privateOnly = policy.admitsPrivate
    ? agentFor({
        allowsAddress: (address) => policy.judge(address) === 'private_allowed',
        refusesHostName: policy.refusesHostName,
      })
    : undefined;
  const now = options.now ?? Date.now;

  async function send(request: WebhookRequest, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const shape = checkUrlShape(request.url);
    if (!shape.ok) return { ok: false, failure: 'invalid_url', message: shape.message, durationMs: 0 };
    const { url } = shape;
    let dispatcher: Dispatcher = standard;
    if (request.live && url.protocol === 'http:') {
      if (privateOnly === undefined) {
        return { ok: false, failure: 'blocked', message: 'Live mode needs an https URL.', durationMs: 0 };
      }
      dispatcher = privateOnly;
    }

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
    const onAbort = () => deadline.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: deadline.signal,
      });
      await response.body.dump({ limit: RESPONSE_BYTES_READ }).catch(() => {});
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status, durationMs: elapsed() };
      return { ...httpFailure(status, response.headers, now()), durationMs: elapsed() };
    } catch (error) {
      if (deadline.signal.aborted && !signal?.aborted) {
        return {
          ok: false,
          failure: 'timeout',
          message: `No answer within ${options.timeoutMs} ms.`,
          durationMs: elapsed(),
        };
      }
      return { ...networkFailure(error), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    send,
    async close() {
      await Promise.all([standard.close(), privateOnly?.close()]);
    },
  };
}

function httpFailure(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  now: number,
): Omit<Extract<SendResult, { ok: false }>, 'durationMs'> {
  if (status >= 300 && status < 400) {
    return { ok: false, failure: 'redirect', status, message: `HTTP ${status}; redirects are not followed.` };
  }
  if (status === 410) return { ok: false, failure: 'gone', status, message: 'HTTP 410 Gone.' };
  const retryAfter = headers['retry-after'];
  const retryAfterMs =
    status === 429 || status === 503
      ? parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, now)
      : undefined;
  return {
    ok: false,
    failure: 'http_status',
    status,
    message: `HTTP ${status}.`,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

function networkFailure(error: unknown): Omit<Extract<SendResult, { ok: false }>, 'durationMs'> {
  type Failure = { code?: string; message?: string };
  const e = error as Failure & { cause?: Failure };
  const code = e.code ?? e.cause?.code ?? '';
  if (code === 'ADDRESS_NOT_ALLOWED') {
    // AddressNotAllowedError names the URL's host, never what it resolved to.
    const refusal = e.code === code ? e : e.cause;
    return {
      ok: false,
      failure: 'blocked',
      message: `${refusal?.message ?? 'address not allowed'} (public addresses only, private ones where the operator allows them; never link-local or cloud metadata addresses).`,
    };
  }
  if (code === 'ECONNREFUSED')
    return { ok: false, failure: 'connection_refused', message: 'Connection refused.' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') {
    return { ok: false, failure: 'dns', message: 'The host name does not resolve.' };
  }
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return { ok: false, failure: 'timeout', message: 'The receiver did not answer in time.' };
  }
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return { ok: false, failure: 'tls', message: `TLS failed (${code}).` };
  }
  return { ok: false, failure: 'network', message: `Connection failed${code ? ` (${code})` : ''}.` };
}
