/**
 * The pass-through baseline of bench/gateway, in its own process (forked by run.ts): a plain Fastify app
 * (logger off) with one route, `POST /v1/availability`, that validates the body against the gateway's own
 * schema (`AvailabilityBody`, compiled by Fastify's default Ajv), forwards a fixed SOAP body (the codec
 * bench's 50-article request) to the canned upstream with undici (a Pool with as many connections as the
 * gateway's default UPSTREAM_MAX_CONCURRENCY), reads the answer and returns a fixed JSON string: the
 * gateway's own answer to the same request, so both send the same bytes back.
 * It does no auth, rate limiting, credential handling, XML encoding or decoding, mapping or logging:
 * the gateway's overhead is what it adds on top of this.
 * With the third argument `decode` it is the "decode-only" reference: the same, plus our typed decode of
 * the SOAP answer (`verfuegbarkeitAnfragen.decodeResponse`, the answer is still the fixed JSON). No
 * gateway that reads the wholesaler's answer can do less work per request than this.
 * IPC: ← {answer: json} → {answerSet}; → {ready, port}; ← {stop: true} closes and exits.
 * argv: the upstream URL (…/msv3/v2.0/verfuegbarkeitAnfragen), upstream connections, [decode].
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { AvailabilityBody } from '../../src/http/routes/availability.js';
import { verfuegbarkeitAnfragen } from '../../src/msv3/operations/verfuegbarkeit-anfragen.js';
import { va50Request } from '../codec/envelopes.js';

const target = new URL(process.argv[2]!);
const connections = Number(process.argv[3] ?? 16);
const decode = process.argv[4] === 'decode';
const soapBody = Buffer.from(va50Request(), 'utf8');
const soapHeaders = {
  'content-type': 'application/soap+xml; charset=utf-8; action="urn:msv3:v2:Msv3:verfuegbarkeitAnfragen"',
  authorization: `Basic ${Buffer.from('bench1:geheim').toString('base64')}`,
};
let answer = '{}';

const pool = new Pool(target.origin, { connections, pipelining: 1 });
const app = Fastify({ logger: false });

app.post('/v1/availability', { schema: { body: AvailabilityBody } }, async (_request, reply) => {
  const response = await pool.request({
    path: target.pathname,
    method: 'POST',
    headers: soapHeaders,
    body: soapBody,
  });
  const xml = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`upstream answered ${response.statusCode}`);
  if (decode && verfuegbarkeitAnfragen.decodeResponse(xml).kind !== 'ok')
    throw new Error('undecodable answer');
  return reply.type('application/json; charset=utf-8').send(answer);
});

process.on('message', (message: { answer?: string; stop?: boolean }) => {
  if (message.answer !== undefined) {
    answer = message.answer;
    process.send?.({ answerSet: true });
  }
  if (message.stop) {
    void app
      .close()
      .then(() => pool.close())
      .finally(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));

await app.listen({ host: '127.0.0.1', port: 0 });
process.send?.({ ready: true, port: (app.server.address() as AddressInfo).port });
