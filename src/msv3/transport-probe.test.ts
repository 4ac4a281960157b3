import { describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import { probeRequest } from './probe-request.js';
import {
  callInput,
  closedPortUrl,
  faultEnvelope,
  SOAP_CONTENT_TYPE,
  testDecode,
  transportTestRig,
} from './test-support/local-server.js';

const { server, transport } = transportTestRig({}, () => ({ clock: manualClock() }));
const request = probeRequest(2, 'msv3-gateway test');

describe('probe', () => {
  it('counts an MSV3 server answering 401 to the anonymous probe as up', async () => {
    const wholesaler = await server((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="MSV3"' }).end();
    });
    const result = await transport().probe({ target: 'phoenix', url: wholesaler.url, request });

    expect(result).toMatchObject({ up: true, status: 401 });
    expect(result.error).toBeUndefined();
    const [seen] = wholesaler.requests;
    expect(seen?.method).toBe('POST');
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.headers['content-type']).toBe(
      'application/soap+xml; charset=utf-8; action="urn:msv3:v2:Msv3:verbindungTesten"',
    );
    expect(seen?.body).toBe(request.body);
  });

  it('reports a refused connection as down', async () => {
    const result = await transport().probe({ target: 'phoenix', url: await closedPortUrl(), request });
    expect(result).toMatchObject({
      up: false,
      error: { reason: 'unreachable', code: 'ECONNREFUSED', target: 'phoenix', operation: 'probe' },
    });
    expect(result.status).toBeUndefined();
  });

  it('reports a proxy 503 as down but a SOAP fault with 500 as up', async () => {
    const proxy = await server((_req, res) =>
      res.writeHead(503, { 'content-type': 'text/html' }).end('<html/>'),
    );
    const soap = await server((_req, res) =>
      res
        .writeHead(500, { 'content-type': SOAP_CONTENT_TYPE })
        .end(faultEnvelope('ServerFaultInfo', 'no operation')),
    );
    const client = transport();
    expect(await client.probe({ target: 'a', url: proxy.url, request })).toMatchObject({
      up: false,
      status: 503,
      error: { reason: 'http_status', status: 503 },
    });
    expect(await client.probe({ target: 'b', url: soap.url, request })).toMatchObject({
      up: true,
      status: 500,
    });
  });

  it('reports a silent server as down at the probe deadline', async () => {
    const wholesaler = await server(() => {});
    const result = await transport({ probeTimeoutMs: 100 }).probe({
      target: 'phoenix',
      url: wholesaler.url,
      request,
    });
    expect(result).toMatchObject({ up: false, error: { reason: 'timeout', phase: 'total', timeoutMs: 100 } });
  });

  it('still probes while the circuit for the target is open', async () => {
    const closed = await closedPortUrl();
    const wholesaler = await server((_req, res) => res.writeHead(401).end());
    const client = transport({ breakerFailureThreshold: 1 });
    await client.call(callInput(closed), testDecode);
    expect(client.breakerState('phoenix').state).toBe('open');

    expect(await client.probe({ target: 'phoenix', url: wholesaler.url, request })).toMatchObject({
      up: true,
    });
    expect(client.breakerState('phoenix').state).toBe('open');
  });
});
