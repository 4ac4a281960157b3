import pg from 'pg';
import type { Logger } from 'pino';

export interface ListenOptions {
  /** First wait before reconnecting; doubled after every failed attempt. */
  firstDelayMs?: number;
  /** Longest wait between two attempts. */
  maxDelayMs?: number;
}

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/**
 * LISTENs on `channel` over its own connection (not one of the pool's) and calls `onNotify` for every
 * notification. When the connection drops (terminated, server stopped) it reconnects with exponential
 * backoff (250 ms doubling up to 5 s, with jitter), for as long as it takes; meanwhile the webhook
 * worker finds new deliveries by polling, and `onNotify` is called once listening again, so nothing
 * committed in between waits for the next poll (docs/resilience.md, "Losing the database"). Resolves
 * once listening, or once the first attempt failed (it keeps trying); the returned function stops.
 */
export async function listenForNotifications(
  connection: pg.ClientConfig,
  channel: string,
  onNotify: () => void,
  logger: Logger,
  options: ListenOptions = {},
): Promise<() => Promise<void>> {
  const firstDelayMs = options.firstDelayMs ?? FIRST_DELAY_MS;
  const maxDelayMs = options.maxDelayMs ?? MAX_DELAY_MS;
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;

  async function connect(): Promise<void> {
    const next = new pg.Client(connection);
    // Also the listener that keeps an 'error' event of this client from killing the process.
    const lost = (err?: Error) => {
      if (client !== next) return;
      if (err)
        logger.warn(
          { code: codeOf(err), reason: err.message },
          'webhook notification connection lost; reconnecting',
        );
      client = undefined;
      next.end().catch(() => {});
      scheduleReconnect();
    };
    next.on('notification', () => onNotify());
    next.on('error', lost);
    next.on('end', () => lost());
    try {
      await next.connect();
      await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    if (stopped) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    failures = 0;
    // Anything committed while nobody was listening is found by this wake.
    onNotify();
  }

  function scheduleReconnect(): void {
    if (stopped || retry !== undefined) return;
    const ceiling = Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(failures, 20));
    // Half fixed, half random: processes that lost the server together do not all return at once.
    const delayMs = ceiling / 2 + Math.random() * (ceiling / 2);
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((err: unknown) => {
        failures += 1;
        logger.warn(
          { code: codeOf(err), reason: (err as Error | undefined)?.message, attempt: failures },
          'webhook notification connection failed; retrying',
        );
        scheduleReconnect();
      });
    }, delayMs);
    retry.unref();
  }

  try {
    await connect();
  } catch (err) {
    failures = 1;
    logger.warn(
      { code: codeOf(err), reason: (err as Error | undefined)?.message },
      'webhook notifications unavailable; polling until they return',
    );
    scheduleReconnect();
  }
  return async () => {
    stopped = true;
    clearTimeout(retry);
    retry = undefined;
    await client?.end().catch(() => {});
    client = undefined;
  };
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
