import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

/**
 * A port on 127.0.0.1 where nothing listens, and where nothing will start listening while the suite
 * runs: tests use it for a wholesaler, database or gateway that is not there (ECONNREFUSED).
 *
 * A port that was free a moment ago (bind to port 0, close) does not do: the kernel hands it to the
 * next server started on port 0, and with the suites running in parallel that was once another test's
 * mock wholesaler, so the "unreachable" wholesaler answered. This port lies below the kernel's
 * ephemeral range, where port 0 never lands, and is checked to refuse connections.
 */
export async function closedLoopbackPort(): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const low = Math.min(20_000, ephemeralLow - 1_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (ephemeralLow - low));
    if (await refuses(port)) return port;
  }
  throw new Error(`no port between ${low} and ${ephemeralLow} refuses connections on 127.0.0.1`);
}

/** `http://127.0.0.1:<closed port>` */
export async function closedLoopbackUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedLoopbackPort()}`;
}

/** Linux's ephemeral port range; elsewhere IANA's (49152–65535). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low! > 1_024) return [low!, high!];
  } catch {
    // not Linux
  }
  return [49_152, 65_535];
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
