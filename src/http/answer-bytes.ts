import type { GatewayApp } from './types.js';

declare module 'fastify' {
  interface FastifyReply {
    /** The pooled buffer this answer's bytes were written into (`installAnswerBytes`); else null. */
    answerBytes: Buffer | null;
  }
}

/**
 * Each pooled buffer's size. An answer is taken when three bytes per character fit (up to 21,845
 * characters; an availability answer of 50 articles has about 17,000): it can never be cut short, and
 * V8 encodes into room that large without checking the room left at every character.
 */
const BUFFER_BYTES = 64 * 1024;
const MAX_CHARS = Math.floor(BUFFER_BYTES / 3);
/** Shorter answers stay strings: they are made of few pieces, and the rope is what the bytes save. */
const MIN_CHARS = 4096;
/** At most this many free buffers are kept (2 MB); more in flight at once are allocated and dropped. */
const POOL_LIMIT = 32;

/**
 * A successful answer of 4,096 to 21,845 characters leaves as UTF-8 bytes written into a reused
 * buffer, not as the serializer's string. The string is a rope of some 1,500 pieces: as a string it is
 * flattened and scanned for its UTF-8 length by Fastify (`Buffer.byteLength`), then joined to the
 * headers, flattened and encoded again by Node. As bytes it is flattened and encoded once, and Node
 * writes the buffer as it is (docs/performance.md "Answers as bytes in reused buffers"). A buffer
 * allocated per answer instead cost Node 24 a sixth more CPU in garbage collection: V8 counts memory
 * outside its heap towards a major collection.
 *
 * A buffer goes back to the pool when the response has finished (`onResponse` runs on the response's
 * `finish` or `error`, after the socket has taken or refused the bytes); one whose response never
 * finishes is left to the garbage collector and never reused.
 *
 * Registered after every other app-wide `onSend` hook, which therefore still see strings; routes' own
 * `onSend` hooks (idempotency) run later and take a Buffer as well as a string.
 */
export function installAnswerBytes(app: GatewayApp): void {
  const free: Buffer[] = [];
  app.decorateReply('answerBytes', null);
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (
      typeof payload !== 'string' ||
      payload.length < MIN_CHARS ||
      payload.length > MAX_CHARS ||
      reply.statusCode >= 300
    ) {
      done(null, payload);
      return;
    }
    const buffer = free.pop() ?? Buffer.allocUnsafeSlow(BUFFER_BYTES);
    const written = buffer.write(payload, 0, BUFFER_BYTES, 'utf8');
    reply.answerBytes = buffer;
    done(null, buffer.subarray(0, written));
  });
  app.addHook('onResponse', (_request, reply, done) => {
    const buffer = reply.answerBytes;
    if (buffer !== null) {
      reply.answerBytes = null;
      if (free.length < POOL_LIMIT) free.push(buffer);
    }
    done();
  });
}
