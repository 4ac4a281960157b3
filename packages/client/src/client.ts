import { GatewayConnectionError, GatewayError } from './errors.js';
import { type ErrorBody, type Operations, operationTable } from './generated/api.js';
import { parseRetryAfter, type RetryOptions, retriesKind, retryDelayMs, retryPolicy } from './retry.js';

export type OperationName = keyof Operations;

/** MSV3 user name and password at the wholesaler, sent as X-MSV3-Username / X-MSV3-Password. */
export interface Msv3Credentials {
  username: string;
  password: string;
}

/**
 * Logins for several wholesalers (POST /v1/orders/split), keyed by wholesaler id; sent as the
 * X-MSV3-Credentials dictionary, each member a byte sequence of `user:password` (any password fits).
 */
export type Msv3CredentialsByWholesaler = Readonly<Record<string, Msv3Credentials>>;

/**
 * The X-MSV3-Credentials header value for `logins` (RFC 8941 dictionary, members as byte sequences),
 * keyed by wholesaler id in lower case; an id that starts with a digit gets a leading `*`, as RFC 8941
 * keys start with a lower-case letter or `*`.
 */
export function credentialDictionary(logins: Msv3CredentialsByWholesaler): string {
  return Object.entries(logins)
    .map(([wholesaler, login]) => {
      const token = bytesToBase64(new TextEncoder().encode(`${login.username}:${login.password}`));
      const key = wholesaler.toLowerCase();
      return `${/^[a-z*]/.test(key) ? key : `*${key}`}=:${token}:`;
    })
    .join(', ');
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return globalThis.btoa(binary);
}

export interface ClientOptions {
  /** The gateway's origin, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** `pk_test_…` or `pk_live_…`. */
  apiKey: string;
  /** Default MSV3 login for the operations that call a wholesaler; each call may pass its own. */
  credentials?: Msv3Credentials;
  /** Default logins per wholesaler for the operations that reach several (X-MSV3-Credentials). */
  wholesalerCredentials?: Msv3CredentialsByWholesaler;
  retry?: RetryOptions;
  /** Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** New Idempotency-Keys; default `crypto.randomUUID()`. */
  newIdempotencyKey?: () => string;
}

export interface RequestOptions {
  /** For operations that take one; default a new key per call, reused by the call's own retries. */
  idempotencyKey?: string;
  credentials?: Msv3Credentials;
  wholesalerCredentials?: Msv3CredentialsByWholesaler;
  retry?: RetryOptions;
  signal?: AbortSignal;
}

type Method<Op extends Operations[OperationName]> = Op['inputRequired'] extends true
  ? (input: Op['input'], options?: RequestOptions) => Promise<Op['response']>
  : (input?: Op['input'], options?: RequestOptions) => Promise<Op['response']>;

/** One method per operation of the gateway's OpenAPI document, named by its operationId. */
export type GatewayClient = { [Name in OperationName]: Method<Operations[Name]> };

/** The error kinds an operation can answer with, e.g. `OperationErrors<'placeOrder'>`. */
export type OperationErrors<Name extends OperationName> = Operations[Name]['errors'];
export type OperationInput<Name extends OperationName> = Operations[Name]['input'];
export type OperationResponse<Name extends OperationName> = Operations[Name]['response'];

type Operation = (typeof operationTable)[OperationName];
type Input = Record<string, unknown> & { body?: unknown };

export function createClient(options: ClientOptions): GatewayClient {
  const send = (name: OperationName, input: Input = {}, request: RequestOptions = {}) =>
    sendOperation(options, operationTable[name], input, request);
  const client: Partial<Record<OperationName, unknown>> = {};
  for (const name of Object.keys(operationTable) as OperationName[]) {
    client[name] = (input?: Input, request?: RequestOptions) => send(name, input, request);
  }
  return client as GatewayClient;
}

async function sendOperation(
  options: ClientOptions,
  operation: Operation,
  input: Input,
  request: RequestOptions,
): Promise<unknown> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const policy = retryPolicy({ ...options.retry, ...request.retry });
  const url = operationUrl(options.baseUrl, operation, input);
  const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': options.apiKey };
  const credentials = request.credentials ?? options.credentials;
  if (operation.credentials && credentials !== undefined) {
    headers['x-msv3-username'] = credentials.username;
    headers['x-msv3-password'] = credentials.password;
  }
  const logins = request.wholesalerCredentials ?? options.wholesalerCredentials;
  if (operation.credentialDictionary && logins !== undefined) {
    headers['x-msv3-credentials'] = credentialDictionary(logins);
  }
  let idempotencyKey: string | undefined;
  if (operation.idempotencyKey) {
    idempotencyKey = request.idempotencyKey ?? (options.newIdempotencyKey ?? randomKey)();
    headers['idempotency-key'] = idempotencyKey;
  }
  let body: string | undefined;
  if (operation.body && input.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(input.body);
  }
  // Repeating is safe for what the gateway never carries out twice (docs/idempotency.md).
  const repeatable =
    operation.method === 'GET' || operation.method === 'DELETE' || idempotencyKey !== undefined;

  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: operation.method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    } catch (cause) {
      if (request.signal?.aborted) throw cause;
      if (!repeatable || attempt > policy.retries) {
        throw new GatewayConnectionError(
          `${operation.method} ${operation.path} got no answer after ${attempt} attempt(s): ${describe(cause)}`,
          attempt,
          idempotencyKey,
          { cause },
        );
      }
      await sleep(retryDelayMs(policy, attempt, undefined)!, request.signal);
      continue;
    }
    if (response.ok) return readAnswer(operation, response);

    const error = await readError(response, idempotencyKey, attempt);
    const delay =
      attempt <= policy.retries && retriesKind(error.kind, repeatable, error.retryAfterSeconds !== undefined)
        ? retryDelayMs(policy, attempt, error.retryAfterSeconds)
        : undefined;
    if (delay === undefined) throw error;
    await sleep(delay, request.signal);
  }
}

function operationUrl(baseUrl: string, operation: Operation, input: Input): string {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = input[name];
    if (value === undefined || value === null || value === '') {
      throw new TypeError(`${operation.path} needs ${name}.`);
    }
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams();
  for (const name of operation.query) {
    const value = input[name];
    if (value !== undefined && value !== null) query.set(name, String(value));
  }
  const search = query.size === 0 ? '' : `?${query}`;
  return `${baseUrl.replace(/\/+$/, '')}${path}${search}`;
}

async function readAnswer(operation: Operation, response: Response): Promise<unknown> {
  if (operation.answer === 'bytes') return new Uint8Array(await response.arrayBuffer());
  if (operation.answer === 'none') {
    await response.body?.cancel();
    return undefined;
  }
  return response.json();
}

async function readError(
  response: Response,
  idempotencyKey: string | undefined,
  attempt: number,
): Promise<GatewayError> {
  const text = await response.text();
  let body: ErrorBody | undefined;
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed?.error === 'string' && typeof parsed?.request_id === 'string') body = parsed;
  } catch {}
  if (body === undefined) {
    // Not the gateway's error body (a proxy's page, say): no kind to go by, so never retried.
    throw new GatewayConnectionError(
      `The answer (HTTP ${response.status}) is not a gateway error body: ${text.slice(0, 200)}`,
      attempt,
      idempotencyKey,
    );
  }
  return new GatewayError(response.status, body, {
    retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
    idempotencyKey,
  });
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? ` (${cause.cause.message})` : '';
  return `${cause.message}${inner}`;
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
