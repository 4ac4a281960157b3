import { buildConnector, type Dispatcher } from 'undici';
import type { HostLookup } from '../lib/address-policy.js';
import { type ConnectPolicy, createGuardedConnector } from '../lib/guarded-connector.js';
import type { StopNotice } from './stop-notice.js';

export interface ExchangeLimits {
  maxBytes: number;
  totalTimeoutMs: number;
}

export interface RawResponse {
  kind: 'response';
  status: number;
  contentType?: string;
  challenge?: string;
  /** The wholesaler's Retry-After header as it came (seconds or an HTTP date), at most 100 characters. */
  retryAfter?: string;
  body: Buffer;
}

export type RawOutcome =
  | RawResponse
  | { kind: 'failed'; error: unknown; sent: boolean }
  | { kind: 'deadline'; sent: boolean; timeoutMs: number }
  | { kind: 'too_large'; status: number; limitBytes: number }
  | { kind: 'closed' }
  /** The transport's `stop` signal ended the exchange (the gateway is shutting down). */
  | { kind: 'stopped'; sent: boolean };

export type RawFailure = Exclude<RawOutcome, RawResponse>;

class ResponseTooLarge extends Error {}

/**
 * Receives undici's callbacks for one request. It uses the classic handler interface on purpose: only that one
 * gets `onRequestSent`, which tells "certainly not delivered" apart from "may have been delivered".
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  sent = false;
  private abortRequest?: (error?: Error) => void;
  private pendingAbort?: Error;
  private status = 0;
  private contentType?: string;
  private challenge?: string;
  private retryAfter?: string;
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly settle: (outcome: RawOutcome) => void,
  ) {}

  /** Stops the request; before it has a connection, as soon as it gets one (nothing is written then). */
  abort(error: Error): void {
    if (this.abortRequest) this.abortRequest(error);
    else this.pendingAbort = error;
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.pendingAbort) abort(this.pendingAbort);
    else this.abortRequest = abort;
  }

  onRequestSent(): void {
    this.sent = true;
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    this.status = status;
    // Any response proves the request arrived, even on a dispatcher that never reports onRequestSent.
    this.sent = true;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1').toLowerCase();
      const value = rawHeaders[i + 1]!.toString('latin1');
      if (name === 'content-type') this.contentType = value;
      else if (name === 'www-authenticate') this.challenge = value.slice(0, 200);
      else if (name === 'retry-after') this.retryAfter = value.slice(0, 100);
      else if (name === 'content-length' && Number(value) > this.maxBytes) {
        this.abort(new ResponseTooLarge());
        return false;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.received += chunk.length;
    if (this.received > this.maxBytes) {
      this.abort(new ResponseTooLarge());
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.settle({
      kind: 'response',
      status: this.status,
      contentType: this.contentType,
      challenge: this.challenge,
      retryAfter: this.retryAfter,
      // Usually one chunk (undici hands out views of socket reads, not reused buffers): no copy then.
      body: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received),
    });
  }

  onError(error: Error): void {
    if (error instanceof ResponseTooLarge) {
      this.settle({ kind: 'too_large', status: this.status, limitBytes: this.maxBytes });
    } else {
      this.settle({ kind: 'failed', error, sent: this.sent });
    }
  }
}

/** Our own reason for stopping a request (deadline, stop or caller abort); the outcome is settled before it fires. */
class ExchangeAbandoned extends Error {}

/**
 * Sends one request; resolves with what happened, rejects only with `signal.reason` when the caller aborts.
 * `stop` (the gateway's shutdown) also ends it, but as an outcome, `stopped`, that says whether the request
 * had been sent: unlike a caller who gave up, the caller still answers its client from it.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: Dispatcher.DispatchOptions,
  limits: ExchangeLimits,
  signal?: AbortSignal,
  stop?: StopNotice,
): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    if (stop?.stopped) return resolve({ kind: 'stopped', sent: false });
    let settled = false;
    const finish = (complete: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      stop?.unlisten(stopListening);
      complete();
    };
    const handler = new ExchangeHandler(limits.maxBytes, (outcome) => finish(() => resolve(outcome)));
    const deadline = setTimeout(() => {
      finish(() => resolve({ kind: 'deadline', sent: handler.sent, timeoutMs: limits.totalTimeoutMs }));
      handler.abort(new ExchangeAbandoned('deadline'));
    }, limits.totalTimeoutMs);
    const onAbort = () => {
      finish(() => reject(signal?.reason));
      handler.abort(new ExchangeAbandoned('aborted by the caller'));
    };
    const onStop = () => {
      finish(() => resolve({ kind: 'stopped', sent: handler.sent }));
      handler.abort(new ExchangeAbandoned('stopped: the gateway is shutting down'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const stopListening = stop?.listen(onStop);
    try {
      dispatcher.dispatch(request, handler);
    } catch (error) {
      handler.onError(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/**
 * Without a policy (catalogue wholesalers, the sandbox: operator-trusted) a plain connector; with one, the
 * guarded connector every customer-chosen endpoint goes through (src/lib/guarded-connector.ts).
 */
export function createConnector(
  connectTimeoutMs: number,
  policy?: ConnectPolicy,
  lookup?: HostLookup,
): buildConnector.connector {
  if (!policy) return buildConnector({ timeout: connectTimeoutMs });
  return createGuardedConnector({ connectTimeoutMs, policy, ...(lookup === undefined ? {} : { lookup }) });
}
