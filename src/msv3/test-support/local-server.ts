import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { closedLoopbackUrl } from '../../../test/closed-port.js';
import { until } from '../../../test/until.js';
import { createCredentials } from '../credentials.js';
import { type DecodeResult, fault, invalid, type Msv3FaultKind, ok } from '../result.js';
import { type CallInput, createTransport, type TransportDeps, type TransportOptions } from '../transport.js';

/** A real HTTP server on 127.0.0.1 with a random port, for transport tests. */
export interface LocalServer {
  url: string;
  port: number;
  /** Requests seen so far, with their complete bodies (as far as they arrived). */
  requests: SeenRequest[];
  /** TCP connections accepted so far. */
  connectionCount(): number;
  close(): Promise<void>;
}

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Handlers get the request after its body has been read completely. */
export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export async function startServer(handler: Handler): Promise<LocalServer> {
  const requests: SeenRequest[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/msv3/v2.0/bestellen`,
    port,
    requests,
    connectionCount: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A URL on 127.0.0.1 where nothing listens (test/closed-port.ts). */
export async function closedPortUrl(): Promise<string> {
  return `${await closedLoopbackUrl()}/msv3/v2.0/bestellen`;
}

function envelope(inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:m="urn:msv3:v2"><env:Body>${inner}</env:Body></env:Envelope>`;
}

export function answerEnvelope(value: string): string {
  return envelope(`<m:answer>${value}</m:answer>`);
}

export function faultEnvelope(
  bean: string,
  reason: string,
  technicalText = 'backend timeout after 30s',
): string {
  return envelope(
    `<env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code><env:Reason><env:Text xml:lang="de">${reason}</env:Text></env:Reason>` +
      `<env:Detail><m:${bean}><m:ErrorCode>S001</m:ErrorCode><m:EndanwenderFehlertext>Bitte spaeter erneut versuchen.</m:EndanwenderFehlertext>` +
      `<m:TechnischerFehlertext>${technicalText}</m:TechnischerFehlertext></m:${bean}></env:Detail></env:Fault>`,
  );
}

const FAULT_BEANS: Record<string, Msv3FaultKind> = {
  ServerFaultInfo: 'ServerFault',
  ValidationFault: 'ValidationFault',
  DenialOfServiceFault: 'DenialOfServiceFault',
};

/**
 * Stands in for the codec's decoders: `<m:answer>` is a success, `env:Fault` a fault (bean from the detail),
 * anything else invalid.
 */
export function testDecode(xml: string): DecodeResult<string> {
  if (xml.includes('<env:Fault>')) {
    const bean = /<m:(\w+)><m:ErrorCode>/.exec(xml)?.[1] ?? '';
    return fault({
      kind: FAULT_BEANS[bean] ?? 'Unknown',
      soapCode: /<env:Value>env:(\w+)</.exec(xml)?.[1] ?? '',
      reason: /<env:Text[^>]*>([^<]*)</.exec(xml)?.[1] ?? '',
      errorCode: /<m:ErrorCode>([^<]*)</.exec(xml)?.[1],
      technicalText: /<m:TechnischerFehlertext>([^<]*)</.exec(xml)?.[1],
    });
  }
  const answer = /<m:answer>([^<]*)<\/m:answer>/.exec(xml);
  return answer ? ok(answer[1]!) : invalid(`no m:answer element in ${xml.slice(0, 200)}`);
}

export const SOAP_CONTENT_TYPE = 'application/soap+xml; charset=utf-8';

export const TEST_PASSWORD = 'S3cr3t-Pässwört!';
const TEST_CREDENTIALS = createCredentials('PLA\\apotheke1', TEST_PASSWORD);
export const TEST_ACTION = 'urn:msv3:v2:Msv3:bestellen';

/** A `bestellen` call to `url` for target `phoenix`. */
export function callInput(url: string, overrides: Partial<CallInput> = {}): CallInput {
  return {
    target: 'phoenix',
    url,
    operation: 'bestellen',
    action: TEST_ACTION,
    body: answerEnvelope('Bestellung für Apotheke Müller'),
    credentials: TEST_CREDENTIALS,
    ...overrides,
  };
}

/** Collects cleanups (servers, transports) for an `afterEach`. */
export function cleanupList() {
  const cleanups: (() => Promise<void>)[] = [];
  return {
    add<T extends { close(): Promise<void> }>(resource: T): T {
      cleanups.push(() => resource.close());
      return resource;
    },
    async run(): Promise<void> {
      await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
    },
  };
}

/**
 * The setup of a transport test file: `server(handler)` starts a local wholesaler, `transport(options,
 * deps)` creates a transport with `baseOptions` (a 5 s total timeout unless given) and `baseDeps()`
 * unless `deps` are given; both, and whatever is added to `cleanups`, are closed after each test.
 */
export function transportTestRig(
  baseOptions: Partial<TransportOptions> = { totalTimeoutMs: 5_000 },
  baseDeps: () => TransportDeps = () => ({}),
) {
  const cleanups = cleanupList();
  afterEach(() => cleanups.run());
  return {
    cleanups,
    server: async (handler: Handler) => cleanups.add(await startServer(handler)),
    transport: (options: Partial<TransportOptions> = {}, deps?: TransportDeps) =>
      cleanups.add(createTransport({ ...baseOptions, ...options }, deps ?? baseDeps())),
  };
}

/** Polls until `condition` holds (test/until.ts, every 5 ms); fails after `timeoutMs` so a test never hangs. */
export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  await until('the condition', condition, timeoutMs, 5);
}
