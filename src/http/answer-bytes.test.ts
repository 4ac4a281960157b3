import { type AddressInfo, connect } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAnswerBytes } from './answer-bytes.js';
import type { GatewayApp } from './types.js';

/** The JSON `{"id":…,"text":…}` padded with `fill` to exactly `chars` characters. */
function answerOf(id: string, chars: number, fill = 'x'): { id: string; text: string } {
  const bare = JSON.stringify({ id, text: '' }).length;
  const text = fill.repeat(Math.ceil((chars - bare) / fill.length)).slice(0, chars - bare);
  return { id, text };
}

/**
 * A bare Fastify app with the hook, over real HTTP: `/answer` answers `?chars=` characters of JSON
 * with `?status=`, and a route-level onSend hook (which runs after the app's, as idempotency's does)
 * records whether each payload reached it as bytes.
 */
async function appWithAnswerBytes() {
  const app = Fastify() as unknown as GatewayApp;
  installAnswerBytes(app);
  const seenAsBytes: boolean[] = [];
  app.get<{ Querystring: { id?: string; chars: string; status?: string; fill?: string } }>(
    '/answer',
    {
      onSend: (_request, _reply, payload, done) => {
        seenAsBytes.push(Buffer.isBuffer(payload));
        done(null, payload);
      },
    },
    async (request, reply) => {
      const { id = 'a', chars, status = '200', fill } = request.query;
      reply.code(Number(status));
      return answerOf(id, Number(chars), fill);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { app, port, url: `http://127.0.0.1:${port}`, seenAsBytes };
}

describe('answers sent as bytes from reused buffers', () => {
  let server: Awaited<ReturnType<typeof appWithAnswerBytes>>;
  beforeAll(async () => {
    server = await appWithAnswerBytes();
  });
  afterAll(async () => {
    await server.app.close();
  });

  async function fetchAnswer(query: string) {
    server.seenAsBytes.length = 0;
    const response = await fetch(`${server.url}/answer?${query}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    return { response, bytes, asBytes: server.seenAsBytes[0] };
  }

  it('sends successful answers of 4,096 to 21,845 characters as bytes, exactly the JSON', async () => {
    for (const [chars, asBytes] of [
      [4_095, false],
      [4_096, true],
      [17_000, true],
      [21_845, true],
      [21_846, false],
    ] as const) {
      const { response, bytes, asBytes: seen } = await fetchAnswer(`chars=${chars}`);
      const expected = Buffer.from(JSON.stringify(answerOf('a', chars)));
      expect(seen, `${chars} characters`).toBe(asBytes);
      expect(bytes.equals(expected), `${chars} characters`).toBe(true);
      expect(response.headers.get('content-length')).toBe(String(expected.length));
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  it('writes characters beyond ASCII as UTF-8, surrogate pairs included', async () => {
    for (const fill of ['ä', 'Grüße €', '😀x']) {
      const { bytes, asBytes } = await fetchAnswer(`chars=12000&fill=${encodeURIComponent(fill)}`);
      expect(asBytes).toBe(true);
      expect(bytes.equals(Buffer.from(JSON.stringify(answerOf('a', 12_000, fill)), 'utf8'))).toBe(true);
    }
  });

  it('leaves error answers as strings', async () => {
    const { response, bytes, asBytes } = await fetchAnswer('chars=8000&status=422');
    expect(response.status).toBe(422);
    expect(asBytes).toBe(false);
    expect(bytes.toString()).toBe(JSON.stringify(answerOf('a', 8_000)));
  });

  it('answers HEAD with the length of the bytes and no body', async () => {
    const response = await fetch(`${server.url}/answer?chars=9000`, { method: 'HEAD' });
    expect(response.headers.get('content-length')).toBe('9000');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it('delivers 300 answers of different lengths, 40 at a time, each intact', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `r${i}`);
    for (let start = 0; start < ids.length; start += 40) {
      const batch = ids.slice(start, start + 40);
      const bodies = await Promise.all(
        batch.map(async (id, i) => {
          const response = await fetch(`${server.url}/answer?id=${id}&chars=${6_000 + i * 311}&fill=${id}`);
          return response.text();
        }),
      );
      bodies.forEach((body, i) => {
        const id = batch[i]!;
        expect(body).toBe(JSON.stringify(answerOf(id, 6_000 + i * 311, id)));
      });
    }
  });

  it('keeps each answer intact when requests arrive pipelined on one connection', async () => {
    const count = 12;
    const requests = Array.from(
      { length: count },
      (_, i) =>
        `GET /answer?id=p${i}&chars=${5_000 + i * 997}&fill=p${i} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
    ).join('');
    const received = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(server.port, '127.0.0.1', () => socket.end(requests));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks)));
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    });
    const bodies: string[] = [];
    let at = 0;
    while (at < received.length) {
      const headerEnd = received.indexOf('\r\n\r\n', at);
      const head = received.subarray(at, headerEnd).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
      bodies.push(received.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8'));
      at = headerEnd + 4 + length;
    }
    expect(bodies).toEqual(
      Array.from({ length: count }, (_, i) => JSON.stringify(answerOf(`p${i}`, 5_000 + i * 997, `p${i}`))),
    );
  });
});
