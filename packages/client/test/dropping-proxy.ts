import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DroppingProxy {
  /** `http://127.0.0.1:<port>`: use as the client's baseUrl. */
  url: string;
  /**
   * Loses the next answer: as soon as the gateway starts answering a request (so it has carried it out),
   * both sockets of that connection are destroyed and the client sees a dropped connection.
   */
  dropNextAnswer(): void;
  /** Answers lost so far. */
  readonly dropped: number;
  close(): Promise<void>;
}

/** A loopback TCP proxy in front of `target` (host:port) that passes bytes through until told to drop. */
export async function startDroppingProxy(target: { host: string; port: number }): Promise<DroppingProxy> {
  let armed = false;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (armed) {
        armed = false;
        dropped += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    dropNextAnswer: () => {
      armed = true;
    },
    get dropped() {
      return dropped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
