import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'undici';
import { createMsv3Client, type Msv3Client, type Msv3Endpoint } from '../../msv3/client.js';
import { createCredentials } from '../../msv3/credentials.js';
import type { Msv3Version } from '../../msv3/envelope.js';
import type { Liefervorgabe, Pzn } from '../../msv3/model.js';
import type { OrderRequest, SubOrder } from '../../msv3/operations/bestellen.js';
import type { Msv3Operation } from '../../msv3/operations/operation.js';
import type { AvailabilityRequest } from '../../msv3/operations/verfuegbarkeit-anfragen.js';
import type { CallResult, Transport, TransportOptions } from '../../msv3/transport.js';
import { createTransport } from '../../msv3/transport.js';
import type { UpstreamError } from '../../msv3/upstream-error.js';
import type { MockWholesalerOptions } from '../options.js';
import { type MockWholesaler, startMockWholesaler } from '../server.js';

/**
 * Drives a mock wholesaler with the gateway's own client over real loopback HTTP. Every test file
 * starts its own sandbox (state is per server), with a manual clock when time matters.
 */

export const CUSTOMER = 'PLA\\apotheke1';
export const PASSWORD = 'irgendein-Passwört';
export const CLIENT_ID = 'msv3-gateway-tests 1.0';

interface CallOptions {
  version?: Msv3Version;
  tenant?: string;
  username?: string;
  password?: string;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Sandbox {
  mock: MockWholesaler;
  transport: Transport;
  client: Msv3Client;
  endpoint(options?: CallOptions): Msv3Endpoint;
  call<Req, Res>(
    operation: Msv3Operation<Req, Res>,
    request: Req,
    options?: CallOptions,
  ): Promise<CallResult<Res>>;
  /** Like `call`, but fails the test unless the call succeeded. */
  ok<Req, Res>(operation: Msv3Operation<Req, Res>, request: Req, options?: CallOptions): Promise<Res>;
  /** Like `call`, but fails the test unless the call failed; returns the error. */
  fails<Req, Res>(
    operation: Msv3Operation<Req, Res>,
    request: Req,
    options?: CallOptions,
  ): Promise<UpstreamError>;
  raw(body: string, options?: RawOptions): Promise<RawResponse>;
  close(): Promise<void>;
}

interface RawOptions {
  path?: string;
  method?: string;
  contentType?: string | null;
  /** `null` sends no Authorization header. */
  authorization?: string | null;
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export async function startSandbox(
  options: MockWholesalerOptions = {},
  transportOptions: Partial<TransportOptions> = {},
): Promise<Sandbox> {
  const mock = await startMockWholesaler(options);
  // Scenario faults must not open the circuit for the calls that follow.
  const transport = createTransport({
    totalTimeoutMs: 10_000,
    breakerFailureThreshold: 10_000,
    ...transportOptions,
  });
  const client = createMsv3Client(transport);
  const endpoint = (o: CallOptions = {}): Msv3Endpoint => ({
    target: 'mock',
    baseUrl: mock.baseUrl({ tenant: o.tenant ?? 'test', version: o.version ?? 2 }),
    version: o.version ?? 2,
  });
  const call = <Req, Res>(operation: Msv3Operation<Req, Res>, request: Req, o: CallOptions = {}) =>
    client.call(
      operation,
      endpoint(o),
      createCredentials(o.username ?? CUSTOMER, o.password ?? PASSWORD),
      request,
    );
  return {
    mock,
    transport,
    client,
    endpoint,
    call,
    async ok(operation, request, o) {
      const result = await call(operation, request, o);
      if (!result.ok) throw new Error(`${operation.name} failed: ${JSON.stringify(result.error)}`);
      return result.value;
    },
    async fails(operation, request, o) {
      const result = await call(operation, request, o);
      if (result.ok) throw new Error(`${operation.name} succeeded: ${JSON.stringify(result.value)}`);
      return result.error;
    },
    async raw(body, o = {}) {
      const headers: Record<string, string> = {};
      if (o.contentType !== null)
        headers['content-type'] = o.contentType ?? 'application/soap+xml; charset=utf-8';
      if (o.authorization !== null) headers.authorization = o.authorization ?? basic(CUSTOMER, PASSWORD);
      const response = await httpRequest(`${mock.url}${o.path ?? '/test/msv3/v2.0/any'}`, {
        method: (o.method ?? 'POST') as 'POST',
        headers,
        ...(o.method === undefined || o.method === 'POST' ? { body } : {}),
      });
      return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
    },
    async close() {
      await transport.close();
      await mock.close();
    },
  };
}

export const uuid = (): string => randomUUID();

export function availabilityRequest(articles: [Pzn, number][]): AvailabilityRequest {
  return {
    clientSoftwareId: CLIENT_ID,
    id: uuid(),
    articles: articles.map(([pzn, quantity]) => ({ pzn, quantity, demand: 'direkt' })),
  };
}

export type Line = [Pzn, number, Liefervorgabe?];

export function subOrder(lines: Line[], overrides: Partial<SubOrder> = {}): SubOrder {
  return {
    id: uuid(),
    orderType: 'NORMAL',
    orderLabel: 'K1',
    supportId: 4712,
    positions: lines.map(([pzn, quantity, instruction]) => ({
      pzn,
      quantity,
      deliveryInstruction: instruction ?? 'MaxDispo',
    })),
    ...overrides,
  };
}

export function orderRequest(...subOrders: SubOrder[]): OrderRequest {
  return { clientSoftwareId: CLIENT_ID, id: uuid(), supportId: 4711, subOrders };
}

/** A SOAP 1.2 envelope around a payload written with the prefix `m` for the version namespace. */
export function envelope(payload: string, version: Msv3Version = 2): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" ` +
    `xmlns:m="urn:msv3:v${version}"><env:Body>${payload}</env:Body></env:Envelope>`
  );
}
