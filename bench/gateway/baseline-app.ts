/**
 * The pass-through baseline's app (bench/gateway/baseline.ts runs it as its own process; the ledger,
 * bench/gateway/ledger.ts, builds it in its own process): a plain Fastify app (logger off) with one
 * route, `POST /v1/availability`, that validates the body against the gateway's own schema
 * (`AvailabilityBody`, compiled by Fastify's default Ajv), forwards a fixed SOAP body (the codec bench's
 * 50-article request) to the canned upstream with undici (a Pool with as many connections as the
 * gateway's default UPSTREAM_MAX_CONCURRENCY), reads the answer and returns a fixed JSON string: the
 * gateway's own answer to the same request, so both send the same bytes back.
 * It does no auth, rate limiting, credential handling, XML encoding or decoding, mapping or logging:
 * the gateway's overhead is what it adds on top of this. With `decode` it is the "decode-only"
 * reference: the same, plus our typed decode of the SOAP answer
 * (`verfuegbarkeitAnfragen.decodeResponse`; the answer is still the fixed JSON).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { AvailabilityBody } from '../../src/http/routes/availability.js';
import { verfuegbarkeitAnfragen } from '../../src/msv3/operations/verfuegbarkeit-anfragen.js';
import { va50Request } from '../codec/envelopes.js';

export interface BaselineApp {
  app: FastifyInstance;
  /** The fixed JSON every request is answered with (the gateway's own answer). */
  setAnswer(json: string): void;
  close(): Promise<void>;
}

/**
 * `spinUs` (0: none): the route keeps the CPU busy that long per request, touching no memory and making
 * no call, before it answers: a baseline that does as much work as the gateway in pure computation
 * shows what the lower request rate alone costs per request (`BENCH_BASELINE_SPIN_US` in run.ts).
 */
export function buildBaselineApp(
  upstreamUrl: string,
  connections: number,
  decode: boolean,
  spinUs = 0,
): BaselineApp {
  const target = new URL(upstreamUrl);
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
    if (spinUs > 0) spin(spinUs);
    return reply.type('application/json; charset=utf-8').send(answer);
  });

  return {
    app,
    setAnswer(json) {
      answer = json;
    },
    async close() {
      await app.close();
      await pool.close();
    },
  };
}

function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}
