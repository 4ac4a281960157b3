import { createServer, type Server, type Socket } from 'node:net';

/**
 * A hand-made wholesaler on a raw TCP socket, so that it can answer what no HTTP library would: broken
 * framing, no status line, endless headers. The first path segment names the behaviour
 * (`/<behaviour>/msv3/v2.0/<service>`); each connection serves one request.
 */

interface UpstreamRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface BehaviourTools {
  /** What a real MSV3 server (the built-in mock) answers to this request: status and SOAP text. */
  validAnswer(request: UpstreamRequest): Promise<{ status: number; body: string }>;
  /** setInterval that stops when the server closes. */
  every(ms: number, tick: () => void): void;
}

/** May return a promise (rejections close the socket); whatever else it returns is ignored. */
export type Behaviour = (socket: Socket, request: UpstreamRequest, tools: BehaviourTools) => unknown;

export interface HostileServer {
  readonly origin: string;
  /** Requests seen per behaviour. */
  readonly hits: Map<string, number>;
  close(): Promise<void>;
}

const MAX_REQUEST_BYTES = 1024 * 1024;

export async function startHostileServer(
  behaviours: Record<string, Behaviour>,
  validAnswer: BehaviourTools['validAnswer'],
): Promise<HostileServer> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const hits = new Map<string, number>();
  const tools: BehaviourTools = {
    validAnswer,
    every(ms, tick) {
      const timer = setInterval(tick, ms);
      timers.add(timer);
    },
  };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const request = parseRequest(buffered);
      if (request === 'incomplete') {
        if (buffered.length > MAX_REQUEST_BYTES) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const name = request.path.split('/')[1] ?? '';
      hits.set(name, (hits.get(name) ?? 0) + 1);
      const behaviour = behaviours[name];
      if (behaviour === undefined) {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
      Promise.resolve(behaviour(socket, request, tools)).catch(() => socket.destroy());
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function parseRequest(buffered: Buffer): UpstreamRequest | 'incomplete' {
  const headEnd = buffered.indexOf('\r\n\r\n');
  if (headEnd < 0) return 'incomplete';
  const [line = '', ...headerLines] = buffered.subarray(0, headEnd).toString('latin1').split('\r\n');
  const [method = '', path = '/'] = line.split(' ');
  const headers: Record<string, string> = {};
  for (const header of headerLines) {
    const colon = header.indexOf(':');
    if (colon > 0) headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = buffered.subarray(headEnd + 4);
  if (body.length < length) return 'incomplete';
  return { method, path, headers, body: body.subarray(0, length) };
}

/** Writes `total` bytes made by `chunk()` as fast as the reader takes them; stops when the socket dies. */
export async function stream(socket: Socket, total: number, chunk: Buffer): Promise<void> {
  let sent = 0;
  while (sent < total && !socket.destroyed) {
    const part = chunk.subarray(0, Math.min(chunk.length, total - sent));
    sent += part.length;
    if (!socket.write(part)) {
      // Whichever comes first; the other listener goes, or every wait would leave one behind.
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }
}

/** A complete HTTP/1.1 answer that closes the connection. */
export function httpAnswer(
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const head = [
    `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Status'}`,
    'Connection: close',
    `Content-Length: ${bytes.length}`,
  ];
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    head.push('Content-Type: application/soap+xml; charset=utf-8');
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), bytes]);
}
