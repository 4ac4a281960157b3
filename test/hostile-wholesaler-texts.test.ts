import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFault } from '../src/msv3/envelope.js';
import { bestellen } from '../src/msv3/operations/bestellen.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { type Gateway, startGateway } from './gateway.js';

/**
 * A wholesaler's fault texts reach clients' terminals, logs and web pages through our error bodies: a
 * hand-made loopback wholesaler (registered as a custom wholesaler, ALLOW_PRIVATE_ENDPOINTS=true)
 * answers with ANSI escapes, control characters, bidi overrides and markup, and none of it may come out.
 */

const ESC = '\u001b';
const HOSTILE_USER_TEXT = `${ESC}[1;31mBitte${ESC}[0m <b>später</b>\r\n\terneut${ESC}]0;pwned\u0007 versuchen<script>fetch('//evil.example')</script> \u202Efdp.exe\u202C`;
const HOSTILE_TECHNICAL_TEXT = `db\u0000 down\u0085${ESC}[2J${'x'.repeat(900)}`;
const HOSTILE_PAGE = `<html><body>${ESC}[5mProxy\u0007 error<script>alert(1)</script>\u2066</body></html>`;

const PLACEHOLDERS = { errorCode: 'CODE', userText: 'USER', technicalText: 'TECHNICAL' };

/**
 * Our encoder drops characters XML does not allow; a careless wholesaler writes them raw. (An in-band
 * Auftragsfehler's ErrorCode has at most 5 characters, so it gets the short hostile code.)
 */
function hostile(envelope: string, errorCode = `E${ESC}[7m1`): string {
  return envelope
    .replace('>CODE<', `>${xmlText(errorCode)}<`)
    .replaceAll('>USER<', `>${xmlText(HOSTILE_USER_TEXT)}<`)
    .replace('>TECHNICAL<', `>${xmlText(HOSTILE_TECHNICAL_TEXT)}<`);
}

function xmlText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A bestellen answer refusing every sub-order in-band (Auftragsfehler) with the placeholder texts. */
function rejectionOf(requestXml: string): string {
  const decoded = bestellen.decodeRequest(requestXml);
  if (decoded.kind !== 'ok') throw new Error(`not a bestellen request: ${JSON.stringify(decoded)}`);
  const { version, request } = decoded.value;
  return bestellen.encodeResponse(version, {
    id: request.id,
    supportId: request.supportId,
    nightMode: false,
    subOrders: request.subOrders.map(({ positions: _, ...header }) => ({
      ...header,
      positions: [],
      error: PLACEHOLDERS,
    })),
  });
}

/** Anything a terminal, a log viewer or a browser would interpret. */
const INTERPRETED = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|<\/?[A-Za-z!?][^<>]*>/;

describe('wholesaler texts in error bodies', () => {
  let database: TestDatabase;
  let gw: Gateway;
  let wholesaler: Server;
  let endpoint: string;

  beforeAll(async () => {
    wholesaler = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        if (req.url?.startsWith('/proxy/')) {
          res.writeHead(503, { 'content-type': 'text/html' }).end(HOSTILE_PAGE);
          return;
        }
        if (req.url?.startsWith('/reject/')) {
          res.writeHead(200, { 'content-type': 'application/soap+xml; charset=utf-8' });
          res.end(hostile(rejectionOf(body), '\u0007E1'));
          return;
        }
        // Our encoder drops characters XML does not allow; a careless wholesaler writes them raw.
        const fault = encodeFault(2, { kind: 'ServerFault', ...PLACEHOLDERS });
        res.writeHead(500, { 'content-type': 'application/soap+xml; charset=utf-8' }).end(hostile(fault));
      });
    });
    await new Promise<void>((resolve) => wholesaler.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(wholesaler.address() as AddressInfo).port}`;
    database = await createTestDatabase('sqlite');
    gw = await startGateway({ database, env: { ALLOW_PRIVATE_ENDPOINTS: 'true' } });
  });
  afterAll(async () => {
    await gw?.close();
    await database?.dispose();
    wholesaler.closeAllConnections();
    await new Promise((resolve) => wholesaler.close(resolve));
  });

  async function customWholesaler(path: string): Promise<string> {
    const response = await gw.inject({
      method: 'POST',
      url: '/v1/wholesalers/custom',
      key: 'live',
      credentials: null,
      body: { name: `Hostile ${path}`, endpoint: `${endpoint}/${path}/msv3/v2.0` },
    });
    expect(response.statusCode).toBe(200);
    return response.json().wholesaler.id;
  }

  const availability = (wholesalerId: string) =>
    gw.inject({
      method: 'POST',
      url: '/v1/availability',
      key: 'live',
      body: { wholesaler: wholesalerId, items: [{ pzn: '4114918', quantity: 1 }] },
    });

  it('strips escapes, controls, bidi overrides and markup from a SOAP fault, and caps its length', async () => {
    const id = await customWholesaler('fault');
    const response = await availability(id);
    expect(response.statusCode).toBe(502);
    const body = response.json();
    expect(body).toMatchObject({
      error: 'wholesaler_fault',
      wholesaler: id,
      message: `The wholesaler ${id} answered with ServerFault: Bitte später erneut versuchen fdp.exe`,
      upstream: {
        kind: 'ServerFault',
        error_code: 'E1',
        user_text: 'Bitte später erneut versuchen fdp.exe',
        technical_text: `db down ${'x'.repeat(491)}…`,
      },
    });
    expect(body.upstream.technical_text).toHaveLength(500);
    for (const text of [body.message, body.upstream.user_text, body.upstream.technical_text]) {
      expect(text).not.toMatch(INTERPRETED);
    }
    expect(response.body).not.toMatch(/\\u001b|\\u0007|\\u202e/i);
  });

  it('cleans the texts of an order the wholesaler rejects in its answer (422 order_rejected)', async () => {
    const id = await customWholesaler('reject');
    const response = await gw.inject({
      method: 'POST',
      url: '/v1/orders',
      key: 'live',
      body: { wholesaler: id, items: [{ pzn: '4114918', quantity: 1 }] },
    });
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body).toMatchObject({
      error: 'order_rejected',
      upstream: {
        kind: 'Auftragsfehler',
        error_code: 'E1',
        user_text: 'Bitte später erneut versuchen fdp.exe',
        technical_text: `db down ${'x'.repeat(491)}…`,
      },
    });
    expect(body.message).toContain(': Bitte später erneut versuchen fdp.exe (E1)');
    expect(body.message).not.toMatch(INTERPRETED);
  });

  it("cleans the start of an error page a proxy sends instead of the wholesaler's answer", async () => {
    const id = await customWholesaler('proxy');
    const response = await availability(id);
    // A 503 page: the wholesaler (or its proxy) says it is unavailable.
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({
      error: 'wholesaler_unavailable',
      upstream: { http_status: 503, technical_text: 'Proxy error' },
    });
  });
});
