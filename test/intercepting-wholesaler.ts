import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A hand-made loopback wholesaler in front of a real mock wholesaler (`src/mock`): it forwards every
 * request unchanged and records it, and lets a test act at the moment a given MSV3 operation arrives
 * (stop the database, drop the answer, replace it). The mock does the booking, so its inspector still
 * tells what the wholesaler holds.
 */

interface SeenRequest {
  /** The root element of the SOAP body, e.g. `bestellen`. */
  operation: string;
  body: string;
}

/** What to do with one request of an operation: `before` runs first; then the answer is forwarded unless replaced. */
interface Interception {
  before?: () => Promise<void>;
  /** Runs once the mock has answered (it acted on the request), before the answer is forwarded. */
  after?: () => Promise<void>;
  /** `drop`: cut the connection after the mock answered (the answer is lost); a function: rewrite the mock's SOAP answer. */
  answer?: 'drop' | ((mockAnswer: string) => string);
  /** With a rewritten answer: the HTTP status and content type to send instead of the mock's. */
  status?: number;
  contentType?: string;
}

export interface InterceptingWholesaler {
  readonly url: string;
  /** The mock's origin; set before the first request. */
  target: string;
  readonly seen: SeenRequest[];
  /** Applies to the next request of `operation` only. */
  interceptNext(operation: string, interception: Interception): void;
  /** Requests of `operation` whose body contains `text` (e.g. an MSV3 id). */
  count(operation: string, text?: string): number;
  close(): Promise<void>;
}

export async function startInterceptingWholesaler(): Promise<InterceptingWholesaler> {
  const seen: SeenRequest[] = [];
  const pending = new Map<string, Interception>();
  const proxy = {
    target: '',
    seen,
    interceptNext(operation: string, interception: Interception) {
      pending.set(operation, interception);
    },
    count: (operation: string, text?: string) =>
      seen.filter(
        (r) =>
          r.operation === operation &&
          (text === undefined || r.body.toLowerCase().includes(text.toLowerCase())),
      ).length,
  };
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const operation = /<(?:[\w-]+:)?Body\b[^>]*>\s*<(?:[\w-]+:)?([\w-]+)/.exec(body)?.[1] ?? '';
      seen.push({ operation, body });
      const interception = pending.get(operation);
      pending.delete(operation);
      await interception?.before?.();
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'authorization', 'soapaction']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await fetch(`${proxy.target}${req.url ?? '/'}`, {
        method: req.method ?? 'POST',
        headers,
        ...(req.method === 'POST' ? { body } : {}),
      });
      let text = await answer.text();
      await interception?.after?.();
      if (interception?.answer === 'drop') {
        req.socket.destroy();
        return;
      }
      if (interception?.answer !== undefined) text = interception.answer(text);
      res.writeHead(interception?.status ?? answer.status, {
        'content-type':
          interception?.contentType ??
          answer.headers.get('content-type') ??
          'application/soap+xml; charset=utf-8',
      });
      res.end(text);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
