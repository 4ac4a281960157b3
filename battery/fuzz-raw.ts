import { connect } from 'node:net';

/**
 * Requests no HTTP client library sends: odd methods (CONNECT), request lines, framing and header bytes,
 * written to a raw socket. Each must get an HTTP answer (a status line) within the bound; an error body
 * must be the error shape.
 */

export interface RawCase {
  name: string;
  /** Bytes to write; a function gets the API key. */
  bytes: (apiKey: string) => string | Buffer;
  /** Keep the socket open after writing (the server must time the client out). */
  holdOpen?: boolean;
}

const HOST = 'Host: 127.0.0.1\r\n';

export const RAW_CASES: RawCase[] = [
  { name: 'CONNECT authority-form', bytes: () => `CONNECT 127.0.0.1:443 HTTP/1.1\r\n${HOST}\r\n` },
  { name: 'CONNECT to a path', bytes: () => `CONNECT /v1/health HTTP/1.1\r\n${HOST}\r\n` },
  { name: 'TRACE', bytes: () => `TRACE /v1/health HTTP/1.1\r\n${HOST}\r\n` },
  { name: 'OPTIONS *', bytes: () => `OPTIONS * HTTP/1.1\r\n${HOST}\r\n` },
  {
    name: 'absolute-form URI elsewhere',
    bytes: () => `GET http://elsewhere.invalid/v1/health HTTP/1.1\r\n${HOST}\r\n`,
  },
  { name: 'HTTP/1.0 without Host', bytes: () => 'GET /v1/health HTTP/1.0\r\n\r\n' },
  { name: 'HTTP/9.9', bytes: () => `GET /v1/health HTTP/9.9\r\n${HOST}\r\n` },
  { name: 'HTTP/0.9 request line', bytes: () => 'GET /v1/health\r\n\r\n' },
  { name: 'unknown method', bytes: () => `BREW /v1/health HTTP/1.1\r\n${HOST}\r\n` },
  { name: 'TLS client hello', bytes: () => Buffer.from('16030100a5010000a10303', 'hex') },
  { name: 'binary garbage', bytes: () => Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256)) },
  { name: 'header without colon', bytes: () => `GET /v1/health HTTP/1.1\r\n${HOST}Broken header\r\n\r\n` },
  { name: 'header with NUL', bytes: () => `GET /v1/health HTTP/1.1\r\n${HOST}X-A: a\u0000b\r\n\r\n` },
  { name: 'NUL in the path', bytes: () => `GET /v1/he\u0000alth HTTP/1.1\r\n${HOST}\r\n` },
  { name: 'request line of 100 KB', bytes: () => `GET /v1/${'a'.repeat(100_000)} HTTP/1.1\r\n${HOST}\r\n` },
  {
    name: 'one header of 100 KB',
    bytes: (k) =>
      `GET /v1/wholesalers HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nX-Big: ${'b'.repeat(100_000)}\r\n\r\n`,
  },
  {
    name: '2,000 headers',
    bytes: (k) =>
      `GET /v1/wholesalers HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\n${'X-N: 1\r\n'.repeat(2000)}\r\n`,
  },
  {
    name: 'Content-Length and chunked',
    bytes: (k) =>
      `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
  },
  {
    name: 'two Content-Lengths',
    bytes: (k) =>
      `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
  },
  {
    name: 'negative Content-Length',
    bytes: (k) => `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Length: -1\r\n\r\n`,
  },
  {
    name: 'bad chunk size',
    bytes: (k) =>
      `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  },
  {
    name: 'chunked with a huge chunk size',
    bytes: (k) =>
      `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{}\r\n`,
    holdOpen: true,
  },
  {
    name: 'body shorter than Content-Length',
    bytes: (k) =>
      `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"wh`,
    holdOpen: true,
  },
  {
    name: 'headers never finished',
    bytes: () => `GET /v1/health HTTP/1.1\r\n${HOST}X-Slow: 1\r\n`,
    holdOpen: true,
  },
  {
    name: 'Expect: 100-continue, body never sent',
    bytes: (k) =>
      `POST /v1/availability HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nContent-Type: application/json\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n`,
    holdOpen: true,
  },
  { name: 'Expect: something else', bytes: () => `GET /v1/health HTTP/1.1\r\n${HOST}Expect: 200-ok\r\n\r\n` },
  {
    name: 'Upgrade: websocket',
    bytes: () =>
      `GET /v1/health HTTP/1.1\r\n${HOST}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
  },
  {
    name: 'Upgrade: h2c',
    bytes: () =>
      `GET /v1/health HTTP/1.1\r\n${HOST}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`,
  },
  { name: 'HTTP/2 preface', bytes: () => 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' },
  {
    name: 'Latin-1 password bytes',
    bytes: (k) =>
      Buffer.concat([
        Buffer.from(
          `GET /v1/contracts?wholesaler=phoenix HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nX-MSV3-Username: apotheke1\r\nX-MSV3-Password: `,
        ),
        Buffer.from([0xe4, 0xff, 0x80]),
        Buffer.from('\r\n\r\n'),
      ]),
  },
  {
    name: 'obs-fold header',
    bytes: (k) => `GET /v1/wholesalers HTTP/1.1\r\n${HOST}X-API-Key: ${k}\r\nX-Fold: a\r\n  b\r\n\r\n`,
  },
  { name: '100 pipelined requests', bytes: () => `GET /v1/health HTTP/1.1\r\n${HOST}\r\n`.repeat(100) },
  {
    name: 'path with backslashes and dots',
    bytes: () => `GET /v1/../v1/./health\\..\\ HTTP/1.1\r\n${HOST}\r\n`,
  },
];

export interface RawOutcome {
  /** The status of the first answer, or undefined when none came. */
  status?: number;
  /** Everything received. */
  text: string;
  ms: number;
}

/** Writes the case and collects the answer until the server closes or `timeoutMs` passes. */
export function rawExchange(
  port: number,
  bytes: string | Buffer,
  timeoutMs: number,
  holdOpen = false,
): Promise<RawOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const status = finalStatus(text);
      resolve({ ...(status === undefined ? {} : { status }), text, ms: performance.now() - started });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Without holdOpen the first complete answer is enough; a kept-alive socket would otherwise idle.
      if (!holdOpen && finalStatus(Buffer.concat(chunks).toString('latin1')) !== undefined)
        setTimeout(finish, 200);
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('connect', () => socket.write(bytes));
  });
}

/** The status of the first final (non-1xx) answer in `text`. */
export function finalStatus(text: string): number | undefined {
  for (const match of text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/g)) {
    const status = Number(match[1]);
    if (status >= 200) return status;
  }
  return undefined;
}

/** The body of the first final answer, when it has a Content-Length (for the error-shape check). */
export function rawBody(text: string): string | undefined {
  const start = text.search(/HTTP\/1\.[01] [2-5]\d\d/);
  if (start < 0) return undefined;
  const headEnd = text.indexOf('\r\n\r\n', start);
  if (headEnd < 0) return undefined;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(start, headEnd + 2));
  if (length === null) return undefined;
  return Buffer.from(text.slice(headEnd + 4), 'latin1')
    .subarray(0, Number(length[1]))
    .toString('utf8');
}
