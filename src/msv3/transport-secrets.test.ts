import type { IncomingMessage } from 'node:http';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createCredentials } from './credentials.js';
import {
  callInput,
  cleanupList,
  closedPortUrl,
  faultEnvelope,
  type Handler,
  SOAP_CONTENT_TYPE,
  startServer,
  TEST_PASSWORD,
  testDecode,
} from './test-support/local-server.js';
import { createTransport } from './transport.js';
import { describeUpstreamError, type UpstreamError } from './upstream-error.js';

const cleanups = cleanupList();
afterEach(() => cleanups.run());

const token = (req: IncomingMessage) => (req.headers.authorization ?? '').slice('Basic '.length);
const password = (req: IncomingMessage) =>
  Buffer.from(token(req), 'base64').toString('utf8').split(':')[1] ?? '';

/** A wholesaler that echoes the credentials it received into every kind of answer. */
const echoing = new Map<string, Handler>([
  ['/401', (req, res) => res.writeHead(401, { 'www-authenticate': `Basic realm="${token(req)}"` }).end()],
  [
    '/503',
    (req, res) =>
      res
        .writeHead(503, { 'content-type': 'text/html' })
        .end(`<p>${req.headers.authorization} / ${password(req)}</p>`),
  ],
  [
    '/fault',
    (req, res) =>
      res
        .writeHead(500, { 'content-type': SOAP_CONTENT_TYPE })
        .end(faultEnvelope('ServerFaultInfo', `login ${token(req)}`, `password was ${password(req)}`)),
  ],
  ['/decode', (req, res) => res.writeHead(200).end(`not an envelope, password ${password(req)}`)],
  ['/big', (req, res) => res.writeHead(200).end(`${password(req)} ${'x'.repeat(10_000)}`)],
  ['/drop', (req) => req.socket.destroy()],
]);

function expectNoSecret(value: unknown, secrets: string[]) {
  const renderings = [
    JSON.stringify(value),
    inspect(value, { depth: null, showHidden: true, getters: true }),
  ];
  if (value instanceof Error) renderings.push(value.message, String(value.stack));
  else renderings.push(describeUpstreamError(value as UpstreamError));
  for (const rendering of renderings) {
    for (const secret of secrets) expect(rendering).not.toContain(secret);
  }
}

describe('the MSV3 password', () => {
  it('never appears in an error, even when the wholesaler echoes it back', async () => {
    const wholesaler = cleanups.add(
      await startServer((req, res, body) => echoing.get(req.url ?? '')?.(req, res, body)),
    );
    const base = wholesaler.url.replace(/\/msv3.*$/, '');
    const client = cleanups.add(createTransport({ maxResponseBytes: 1_024, breakerFailureThreshold: 2 }));
    const errors: UpstreamError[] = [];
    for (const path of echoing.keys()) {
      const result = await client.call(callInput(`${base}${path}`), testDecode);
      if (!result.ok) errors.push(result.error);
    }
    const closed = await closedPortUrl();
    for (let i = 0; i < 3; i++) {
      const result = await client.call(callInput(closed, { target: 'sanacorp' }), testDecode);
      if (!result.ok) errors.push(result.error);
    }

    expect(errors.map((error) => error.reason)).toEqual([
      'credentials_rejected',
      'http_status',
      'soap_fault',
      'decode',
      'too_large',
      'unreachable',
      'unreachable',
      'unreachable',
      'circuit_open',
    ]);
    const sentToken = token({ headers: wholesaler.requests[0]!.headers } as IncomingMessage);
    expect(Buffer.from(sentToken, 'base64').toString('utf8')).toContain(TEST_PASSWORD);
    // The echoes did arrive; they were scrubbed.
    expect(JSON.stringify(errors.slice(0, 4))).toContain('[redacted]');
    for (const error of errors) expectNoSecret(error, [TEST_PASSWORD, sentToken]);
  });

  it('never appears in the message of an error thrown for bad input', async () => {
    const client = cleanups.add(createTransport());
    const thrown: unknown[] = [];
    const attempts = [
      callInput(`http://[${TEST_PASSWORD}/x`),
      callInput(`http://user:${encodeURIComponent(TEST_PASSWORD)}@example.org/x`),
      callInput('http://example.org/x', { credentials: createCredentials('a:b', TEST_PASSWORD) }),
    ];
    for (const attempt of attempts) {
      await client.call(attempt, testDecode).catch((error: unknown) => thrown.push(error));
    }
    expect(thrown).toHaveLength(3);
    for (const error of thrown) {
      expect(error).toBeInstanceOf(TypeError);
      expectNoSecret(error, [TEST_PASSWORD, encodeURIComponent(TEST_PASSWORD)]);
    }
  });
});
