import { Agent, createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small round-robin HTTP proxy on 127.0.0.1 in front of the gateway processes (keep-alive to each).
 * A backend that refuses the connection is marked down and the request goes to the next one: it never
 * reached a gateway, so sending it again cannot do anything twice. Any other failure (reset, timeout
 * after the request was written) may have reached the gateway: the client gets 502 and decides itself
 * (with its Idempotency-Key), as it would behind a real load balancer.
 */

interface Backend {
  url: string;
  down: boolean;
}

export interface ClusterProxy {
  url: string;
  backends: Backend[];
  /** Requests resent to another backend after a refused connection. */
  reroutes(): number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host']);

export async function startClusterProxy(urls: string[]): Promise<ClusterProxy> {
  const backends: Backend[] = urls.map((url) => ({ url, down: false }));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;
  let reroutes = 0;

  const forward = (req: IncomingMessage, body: Buffer, backend: Backend) =>
    new Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }>(
      (resolve, reject) => {
        const target = new URL(req.url ?? '/', backend.url);
        const headers: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
        }
        headers['content-length'] = String(body.length);
        const upstream = request(target, { method: req.method, headers, agent, timeout: 60_000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const out: Record<string, string | string[]> = {};
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
            }
            resolve({ status: res.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) });
          });
          res.on('error', reject);
        });
        upstream.on('timeout', () => upstream.destroy(new Error('upstream timeout')));
        upstream.on('error', reject);
        upstream.end(body);
      },
    );

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        for (let tried = 0; tried < backends.length; tried++) {
          const live = backends.filter((b) => !b.down);
          if (live.length === 0) break;
          const backend = live[next++ % live.length]!;
          try {
            const answer = await forward(req, body, backend);
            // Which process answered, for the benchmark's per-process counts.
            answer.headers['x-cluster-backend'] = String(backends.indexOf(backend));
            res.writeHead(answer.status, answer.headers).end(answer.body);
            return;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
              backend.down = true;
              reroutes += 1;
              continue;
            }
            res
              .writeHead(502, { 'content-type': 'application/json' })
              .end(JSON.stringify({ error: 'proxy_upstream_failed', message: String(error) }));
            return;
          }
        }
        res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
          .end(JSON.stringify({ error: 'proxy_no_backend', message: 'no live backend' }));
      })();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    backends,
    reroutes: () => reroutes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
