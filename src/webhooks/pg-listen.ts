import pg from 'pg';

export interface ListenLogger {
  warn(object: object, message: string): void;
}

const RECONNECT_DELAY_MS = 1_000;

/**
 * LISTENs on `channel` over its own connection (not one of the pool's) and calls `onNotify` for every
 * notification; reconnects after a second when the connection drops. Resolves once listening; the
 * returned function stops.
 */
export async function listenForNotifications(
  connection: pg.ClientConfig,
  channel: string,
  onNotify: () => void,
  logger: ListenLogger,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const next = new pg.Client(connection);
    const lost = (err?: Error) => {
      if (client !== next) return;
      if (err) logger.warn({ err }, 'webhook notification connection lost; reconnecting');
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
    // Anything committed while nobody was listening is found by this wake.
    onNotify();
  }

  function scheduleReconnect(): void {
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((err: unknown) => {
        logger.warn({ err }, 'webhook notification connection failed; retrying');
        scheduleReconnect();
      });
    }, RECONNECT_DELAY_MS);
    retry.unref();
  }

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
    client = undefined;
  };
}
