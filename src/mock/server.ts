import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Msv3Version } from '../msv3/envelope.js';
import { authenticate, REALM } from './auth.js';
import { handleControl } from './control-http.js';
import { answerCall, type Outcome, readCall } from './dispatch.js';
import { parseControlPath, parseEndpointPath, tenantBaseUrl } from './endpoint-path.js';
import { mediaType, readBody, sendSoap, sendText } from './http-io.js';
import { createInspector, type MockInspector } from './inspect.js';
import { type MockWholesalerOptions, type ResolvedOptions, resolveOptions } from './options.js';

/**
 * The mock wholesaler: a real SOAP 1.2 server on `node:http`, built on the gateway's own codecs. Used
 * in-process as the gateway's sandbox (one server, one tenant per simulated wholesaler) and standalone
 * through `msv3-gateway mock` for pharmacy developers testing their own MSV3 clients.
 *
 * Per request, in the order a servlet container with JAX-WS would apply them: method (405; `GET ?wsdl`
 * → 404 note), a tenant taken down (503, before anything else), Basic auth (401 challenge / 403), content type (415 for anything but
 * application/soap+xml, JAX-WS wording), body size (413), then dispatch on the body's root element.
 * `POST /<tenant>/control/<action>` is the control surface instead (`control.ts`).
 */

export interface MockWholesaler extends MockInspector {
  /** The origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  readonly versions: readonly Msv3Version[];
  /** `…/<tenant>/msv3/v<version>.0`, the base URL a client configures (default tenant '', version: highest). */
  baseUrl(options?: { tenant?: string; version?: Msv3Version }): string;
  /** Requests that reached an operation (after auth and content checks), optionally for one operation. */
  requestCount(operation?: string): number;
  /** Stops listening, cancels delayed answers and cuts open connections. */
  close(): Promise<void>;
}

const WSDL_NOTE =
  'This MSV3 sandbox serves no WSDL or XSD; use the files that come with the MSV3 specification.\n' +
  'POST SOAP 1.2 (application/soap+xml) to any path below /msv3: the body root element selects the operation.\n';

function originOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

export async function startMockWholesaler(options: MockWholesalerOptions = {}): Promise<MockWholesaler> {
  const config = resolveOptions(options);
  const requestCounts = new Map<string, number>();
  const pendingAnswers = new Set<NodeJS.Timeout>();
  let closing = false;

  const server = createServer((req, res) => {
    const started = performance.now();
    handle(req, res, config, pendingAnswers, requestCounts, () => closing).then(
      (summary) =>
        config.log?.(`${req.method} ${req.url} ${summary} (${Math.round(performance.now() - started)} ms)`),
      () => {
        if (!res.headersSent) sendText(res, 500, 'Internal Server Error\n');
        else res.destroy();
      },
    );
  });
  // Keep idle connections longer than the gateway's transport does (UPSTREAM keep-alive 4 s), so the
  // client always closes first: with Node's default 5 s, a busy machine's late timers let the gateway
  // reuse a connection the mock had just closed (ECONNRESET on an idempotent read).
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = originOf(config.host, port);

  return {
    url,
    port,
    versions: config.versions,
    baseUrl: (o = {}) =>
      tenantBaseUrl(url, o.tenant ?? '', o.version ?? config.versions[config.versions.length - 1]!),
    requestCount: (operation) =>
      operation === undefined
        ? [...requestCounts.values()].reduce((a, b) => a + b, 0)
        : (requestCounts.get(operation) ?? 0),
    ...createInspector(config.world),
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const timer of pendingAnswers) clearTimeout(timer);
        pendingAnswers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Handles one request; resolves to a short summary for the log line. */
async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  config: ResolvedOptions,
  pendingAnswers: Set<NodeJS.Timeout>,
  requestCounts: Map<string, number>,
  isClosing: () => boolean,
): Promise<string> {
  const url = req.url ?? '/';
  const control = parseControlPath(url);
  if (control !== undefined && req.method === 'POST') return handleControl(req, res, config, control);
  if (req.method !== 'POST') {
    if ((req.method === 'GET' || req.method === 'HEAD') && /[?&]wsdl(=|&|$)/i.test(url)) {
      sendText(res, 404, WSDL_NOTE);
      return '→ 404 (no WSDL)';
    }
    sendText(res, 405, 'Method Not Allowed: MSV3 operations are POSTed\n', { allow: 'POST' });
    return '→ 405';
  }
  const path = parseEndpointPath(url);
  // In front of everything else, as a wholesaler's load balancer answers during maintenance.
  if (await config.world.isDown(path.tenant)) {
    sendText(res, 503, 'Service Unavailable: this wholesaler is down for maintenance\n', {
      'retry-after': '60',
    });
    return '→ 503 (down)';
  }
  const auth = authenticate(req.headers.authorization, config.credentials);
  if (!auth.ok) {
    if (auth.status === 401) {
      sendText(res, 401, 'Unauthorized\n', { 'www-authenticate': `Basic realm="${REALM}"` });
    } else {
      sendText(res, 403, 'Forbidden\n');
    }
    return `→ ${auth.status}`;
  }
  const contentType = req.headers['content-type'];
  if (mediaType(contentType) !== 'application/soap+xml') {
    // JAX-WS RI's words for a SOAP 1.1 request to a SOAP 1.2 endpoint (docs/msv3.md "Envelope").
    sendText(
      res,
      415,
      `Unsupported Content-Type: ${contentType ?? ''} Supported ones are: [application/soap+xml]`,
    );
    return '→ 415';
  }
  const read = await readBody(req, config.maxBodyBytes);
  if (!read.ok) {
    if (read.reason === 'too_large') {
      sendText(res, 413, `Request body larger than ${config.maxBodyBytes} bytes\n`, { connection: 'close' });
      return '→ 413';
    }
    return '→ aborted by the client';
  }
  const versions = config.versions.filter((v) => path.version === undefined || v === path.version);
  const call = readCall({ body: read.body, versions, customerId: auth.customerId });
  const { outcome, operation, version } =
    'handler' in call
      ? await config.world.update(path.tenant, call.state, (tenant) => answerCall(call, tenant, config.env))
      : call;
  if (operation !== undefined) requestCounts.set(operation, (requestCounts.get(operation) ?? 0) + 1);
  const label = operation === undefined ? '' : `${operation} v${version} `;
  return `${label}${await deliver(req, res, outcome, pendingAnswers, isClosing)}`;
}

/** Sends the outcome: now, later, or not at all (a dropped connection). */
function deliver(
  req: IncomingMessage,
  res: ServerResponse,
  outcome: Outcome,
  pendingAnswers: Set<NodeJS.Timeout>,
  isClosing: () => boolean,
): Promise<string> {
  if (outcome.kind === 'drop') {
    req.socket.destroy();
    return Promise.resolve('→ connection dropped');
  }
  const send = () => {
    sendSoap(res, outcome.status, outcome.body);
    return `→ ${outcome.status}`;
  };
  if (outcome.delayMs === 0) return Promise.resolve(send());
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pendingAnswers.delete(timer);
      if (isClosing() || res.destroyed) resolve('→ abandoned');
      else resolve(`${send()} after ${outcome.delayMs} ms`);
    }, outcome.delayMs);
    pendingAnswers.add(timer);
    // A client that gives up (timeout) closes the socket; the answer then has nowhere to go.
    res.on('close', () => {
      if (!res.writableFinished && pendingAnswers.delete(timer)) {
        clearTimeout(timer);
        resolve('→ client left before the delayed answer');
      }
    });
  });
}
