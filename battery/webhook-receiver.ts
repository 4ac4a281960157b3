import { createServer, type Server } from 'node:http';

/** A local webhook receiver that counts events by id (deliveries are at least once: repeats are dropped). */
export interface WebhookReceiver {
  readonly url: string;
  /** event id → the event. */
  readonly events: Map<string, { type: string; data: Record<string, unknown> }>;
  deliveries(): number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const events = new Map<string, { type: string; data: Record<string, unknown> }>();
  let deliveries = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries++;
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString()) as {
          id: string;
          type: string;
          data: Record<string, unknown>;
        };
        events.set(event.id, { type: event.type, data: event.data });
      } catch {
        // not an event: still 204, the count shows it
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    events,
    deliveries: () => deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
