import { describe, expect, it } from 'vitest';
import { createCredentials } from './credentials.js';
import {
  answerEnvelope,
  faultEnvelope,
  type Handler,
  callInput as input,
  SOAP_CONTENT_TYPE,
  TEST_ACTION,
  testDecode,
  transportTestRig,
  waitFor,
} from './test-support/local-server.js';

const { server, transport } = transportTestRig();

const answering: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end(answerEnvelope('angenommen'));
};

describe('a successful call', () => {
  it('POSTs the envelope with SOAP 1.2 content type, pre-emptive Basic auth and the user agent', async () => {
    const wholesaler = await server(answering);
    const result = await transport().call(input(`${wholesaler.url}?x=1`), testDecode);

    expect(result).toMatchObject({ ok: true, value: 'angenommen', status: 200 });
    const [request] = wholesaler.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/msv3/v2.0/bestellen?x=1');
    expect(request?.body).toBe(answerEnvelope('Bestellung für Apotheke Müller'));
    expect(request?.headers['content-type']).toBe(
      `application/soap+xml; charset=utf-8; action="${TEST_ACTION}"`,
    );
    expect(request?.headers['content-length']).toBe(
      String(Buffer.byteLength(answerEnvelope('Bestellung für Apotheke Müller'))),
    );
    expect(request?.headers.accept).toMatch(/^application\/soap\+xml/);
    expect(request?.headers['user-agent']).toMatch(/^msv3-gateway\/\d+\.\d+\.\d+/);
    const authorization = request?.headers.authorization ?? '';
    expect(authorization).toMatch(/^Basic /);
    expect(Buffer.from(authorization.slice('Basic '.length), 'base64').toString('utf8')).toBe(
      'PLA\\apotheke1:S3cr3t-Pässwört!',
    );
  });

  it('sends a configured user agent instead of the default', async () => {
    const wholesaler = await server(answering);
    await transport({ userAgent: 'Apotheken-Software/7.1' }).call(input(wholesaler.url), testDecode);
    expect(wholesaler.requests[0]?.headers['user-agent']).toBe('Apotheken-Software/7.1');
  });

  it('reuses one kept-alive connection for consecutive calls', async () => {
    const wholesaler = await server(answering);
    const client = transport();
    for (let i = 0; i < 4; i++) {
      expect((await client.call(input(wholesaler.url), testDecode)).ok).toBe(true);
      // undici marks the connection free in a microtask after the answer; a caller that sends again within the
      // same microtask chain gets a second pooled connection (also kept alive). Real callers are never that fast.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(wholesaler.requests).toHaveLength(4);
    expect(wholesaler.connectionCount()).toBe(1);
  });

  it('decodes the body as UTF-8 even when a character is split across chunks', async () => {
    const bytes = Buffer.from(answerEnvelope('Großhändler'), 'utf8');
    const split = bytes.indexOf(Buffer.from('ä', 'utf8')) + 1;
    const wholesaler = await server((_req, res) => {
      res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE });
      res.write(bytes.subarray(0, split));
      setTimeout(() => res.end(bytes.subarray(split)), 20);
    });
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({ ok: true, value: 'Großhändler' });
  });
});

describe('answers that are not a success', () => {
  it('reports 401 with WWW-Authenticate as rejected credentials, whatever the body', async () => {
    const wholesaler = await server((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="MSV3"', 'content-type': SOAP_CONTENT_TYPE });
      res.end(faultEnvelope('ServerFaultInfo', 'not logged in'));
    });
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'credentials_rejected',
        status: 401,
        challenge: 'Basic realm="MSV3"',
        target: 'phoenix',
        operation: 'bestellen',
        maybeDelivered: false,
        retryable: false,
      },
    });
  });

  it('reports 403 as rejected credentials', async () => {
    const wholesaler = await server((_req, res) => res.writeHead(403).end('Forbidden'));
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({ ok: false, error: { reason: 'credentials_rejected', status: 403 } });
  });

  it('turns a SOAP fault sent with HTTP 500 into a retryable soap_fault that may have been processed', async () => {
    const wholesaler = await server((_req, res) => {
      res
        .writeHead(500, { 'content-type': SOAP_CONTENT_TYPE })
        .end(faultEnvelope('ServerFaultInfo', 'Interner Fehler'));
    });
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'soap_fault',
        status: 500,
        fault: { kind: 'ServerFault', soapCode: 'Receiver', reason: 'Interner Fehler', errorCode: 'S001' },
        retryable: true,
        maybeDelivered: true,
      },
    });
  });

  it('recognises a fault envelope by its body when the content type is text/xml (HTTP 400)', async () => {
    const wholesaler = await server((_req, res) => {
      res
        .writeHead(400, { 'content-type': 'text/xml' })
        .end(faultEnvelope('ValidationFault', 'Pzn ungueltig'));
    });
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'soap_fault',
        status: 400,
        fault: { kind: 'ValidationFault' },
        retryable: false,
        maybeDelivered: false,
      },
    });
  });

  it('reports a non-SOAP 503 as http_status with a short body snippet', async () => {
    const page = `<html><body><h1>Service Unavailable</h1>${'x'.repeat(5_000)}</body></html>`;
    const wholesaler = await server((_req, res) =>
      res.writeHead(503, { 'content-type': 'text/html' }).end(page),
    );
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'http_status',
        status: 503,
        contentType: 'text/html',
        retryable: true,
        maybeDelivered: true,
      },
    });
    if (result.ok || result.error.reason !== 'http_status') throw new Error('expected http_status');
    expect(result.error.bodySnippet).toMatch(/^<html><body><h1>Service Unavailable/);
    expect(result.error.bodySnippet.length).toBeLessThanOrEqual(301);
  });

  it('treats a decodable non-fault envelope on an error status as http_status', async () => {
    const wholesaler = await server((_req, res) => {
      res.writeHead(500, { 'content-type': SOAP_CONTENT_TYPE }).end(answerEnvelope('seltsam'));
    });
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({ ok: false, error: { reason: 'http_status', status: 500 } });
  });

  it('reports a 200 answer the decoder rejects as a decode error', async () => {
    const wholesaler = await server((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html/>'),
    );
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'decode', status: 200, retryable: false, maybeDelivered: true },
    });
    if (result.ok || result.error.reason !== 'decode') throw new Error('expected decode');
    expect(result.error.detail).toContain('no m:answer element');
  });

  it('reports a decoder that throws as a decode error instead of failing the call', async () => {
    const wholesaler = await server(answering);
    const result = await transport().call(input(wholesaler.url), () => {
      throw new Error('bug in the codec');
    });
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'decode', detail: 'decoder threw: bug in the codec' },
    });
  });

  it('does not follow a redirect', async () => {
    const elsewhere = await server(answering);
    const wholesaler = await server((_req, res) => res.writeHead(302, { location: elsewhere.url }).end());
    const result = await transport().call(input(wholesaler.url), testDecode);
    expect(result).toMatchObject({
      ok: false,
      error: { reason: 'http_status', status: 302, retryable: false, maybeDelivered: false },
    });
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe('closing', () => {
  it('waits for a call in flight, then fails later calls as unreachable without connecting', async () => {
    let answer: () => void = () => {};
    const wholesaler = await server((_req, res) => {
      answer = () => res.writeHead(200, { 'content-type': SOAP_CONTENT_TYPE }).end(answerEnvelope('spät'));
    });
    const client = transport();
    const inFlight = client.call(input(wholesaler.url), testDecode);
    await waitFor(() => wholesaler.requests.length === 1);
    const closing = client.close();
    answer();
    expect(await inFlight).toMatchObject({ ok: true, value: 'spät' });
    await closing;

    const after = await client.call(input(wholesaler.url), testDecode);
    expect(after).toMatchObject({
      ok: false,
      error: { reason: 'unreachable', code: 'TRANSPORT_CLOSED', maybeDelivered: false },
    });
    expect(wholesaler.requests).toHaveLength(1);
    expect(wholesaler.connectionCount()).toBe(1);
  });
});

describe('invalid input', () => {
  it('rejects a URL that is not http(s) or carries credentials, and a user name with a colon', async () => {
    const client = transport();
    await expect(client.call(input('ftp://example.org/x'), testDecode)).rejects.toThrow(TypeError);
    await expect(client.call(input('http://u:p@example.org/x'), testDecode)).rejects.toThrow(
      'wholesaler URL must not contain credentials',
    );
    const colon = createCredentials('a:b', 'pw');
    await expect(
      client.call(input('http://example.org/x', { credentials: colon }), testDecode),
    ).rejects.toThrow('must not contain ":"');
  });
});
