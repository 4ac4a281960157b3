/**
 * The logical clients of bench/overload: each one sends `POST /v1/availability`, and after an answer at
 * once the next (a closed loop without think time: every client always wants a call). A refusal (503 or
 * 429) is retried either at once (`retry: 'at_once'`) or after its Retry-After plus up to 1 s of random
 * jitter (`retry: 'retry_after'`; whole seconds would otherwise bring every refused client back in the
 * same instant). Clients start spread over `rampMs`, so the listen backlogs are not flooded (all at
 * once, 10,000 connections stalled the gateway for 20 s). Each client has its own keep-alive
 * connection (an undici Client; the gateway sees as many connections as there are clients).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'undici';

export type RetryPolicy = 'at_once' | 'retry_after';

interface AccountLoad {
  name: string;
  key: string;
  clients: number;
}

export interface LoadOptions {
  url: string;
  accounts: AccountLoad[];
  body: string;
  retry: RetryPolicy;
  durationMs: number;
  rampMs: number;
  /** Called once the last client has started (the measuring window's start). */
  onStarted?: () => void;
  /** Called when the window ends (clients still finish the call they are in). */
  onEnded?: () => void;
}

export interface AccountFigures {
  name: string;
  clients: number;
  /** 200 answers completed inside the window. */
  successes: number;
  /** Refusals by error kind (`gateway_busy`, `wholesaler_throttled`, `rate_limited`, …). */
  refusals: Record<string, number>;
  /** Other answers and failures (status or error code → count). */
  failures: Record<string, number>;
  /** Request → 200 answer, ms. */
  latencies: number[];
  /** A call's first attempt → its 200 answer, retries and waits included, ms. */
  callTimes: number[];
  /** Retry-After values seen (seconds → count). */
  retryAfter: Record<string, number>;
}

export async function runLoad(options: LoadOptions): Promise<AccountFigures[]> {
  const total = options.accounts.reduce((sum, account) => sum + account.clients, 0);
  // One undici Client (one connection) per logical client: connected once in the ramp, never shared.
  const connections: Client[] = [];
  const connect = () => {
    const connection = openConnection(options.url);
    connections.push(connection);
    return connection;
  };
  const figures = options.accounts.map<AccountFigures>((account) => ({
    name: account.name,
    clients: account.clients,
    successes: 0,
    refusals: {},
    failures: {},
    latencies: [],
    callTimes: [],
    retryAfter: {},
  }));
  let windowStart = Number.POSITIVE_INFINITY;
  let windowEnd = Number.POSITIVE_INFINITY;
  const inWindow = (at: number) => at >= windowStart && at <= windowEnd;

  async function client(account: AccountLoad, figure: AccountFigures, pool: Client): Promise<void> {
    const headers = availabilityHeaders(account.key);
    let callStarted = performance.now();
    while (performance.now() < windowEnd) {
      const sent = performance.now();
      let wait = 0;
      try {
        const answer = await pool.request({
          path: '/v1/availability',
          method: 'POST',
          headers,
          body: options.body,
        });
        const text = await answer.body.text();
        const at = performance.now();
        if (answer.statusCode === 200) {
          if (inWindow(at)) {
            figure.successes++;
            figure.latencies.push(at - sent);
            figure.callTimes.push(at - callStarted);
          }
          callStarted = at;
          continue;
        }
        const kind = errorKind(answer.statusCode, text);
        if (answer.statusCode === 503 || answer.statusCode === 429) {
          if (inWindow(at)) count(figure.refusals, kind);
          const retryAfter = Number(answer.headers['retry-after'] ?? 1);
          if (inWindow(at)) count(figure.retryAfter, String(retryAfter));
          if (options.retry === 'retry_after') wait = retryAfter * 1000 + Math.random() * 1000;
        } else {
          if (inWindow(at)) count(figure.failures, kind);
          wait = 1000;
        }
      } catch (error) {
        if (inWindow(performance.now())) count(figure.failures, (error as { code?: string }).code ?? 'error');
        wait = 1000;
      }
      if (wait > 0) {
        const remaining = windowEnd - performance.now();
        if (remaining <= 0) break;
        await sleep(Math.min(wait, remaining));
      }
    }
  }

  const rampStart = performance.now();
  const running: Promise<void>[] = [];
  let index = 0;
  // The accounts' clients start interleaved, so both are connected early in the ramp.
  const order = options.accounts.flatMap((account, i) =>
    Array.from({ length: account.clients }, (_, c) => ({ i, at: c / account.clients })),
  );
  order.sort((x, y) => x.at - y.at);
  for (const { i } of order) {
    const startAt = rampStart + (options.rampMs * index++) / total;
    running.push(
      (async () => {
        const delay = startAt - performance.now();
        if (delay > 0) await sleep(delay);
        await client(options.accounts[i]!, figures[i]!, connect());
      })(),
    );
  }
  await sleep(options.rampMs);
  windowStart = performance.now();
  windowEnd = windowStart + options.durationMs;
  options.onStarted?.();
  const ended = setTimeout(() => options.onEnded?.(), options.durationMs);
  await Promise.all(running);
  clearTimeout(ended);
  await Promise.all(connections.map((connection) => connection.destroy()));
  return figures;
}

/** One keep-alive connection of one logical client (an undici Client), patient enough for 5 s calls. */
function openConnection(url: string): Client {
  return new Client(url, {
    keepAliveTimeout: 120_000,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    connectTimeout: 30_000,
  });
}

function availabilityHeaders(apiKey: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-api-key': apiKey,
    'x-msv3-username': 'bench1',
    'x-msv3-password': 'geheim',
  };
}

/** The answer's error kind (`gateway_busy`, …), or `http_<status>` when the body names none. */
function errorKind(status: number, body: string): string {
  try {
    return (JSON.parse(body) as { error?: string }).error ?? `http_${status}`;
  } catch {
    return `http_${status}`;
  }
}

function count(record: Record<string, number>, key: string): void {
  record[key] = (record[key] ?? 0) + 1;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface WaveOptions {
  url: string;
  accounts: AccountLoad[];
  body: string;
  waves: number;
  /** New connections a second while the clients connect (before the first wave). */
  connectPerSecond: number;
  /** Called once every client is connected, just before the first wave. */
  onConnected?: () => void;
}

export interface WaveFigures {
  /** Calls sent per wave (one per client). */
  calls: number;
  successes: number;
  failures: Record<string, number>;
  /** First request of the wave → its last answer, ms. */
  waveMs: number;
  /** Request → 200 answer, ms. */
  latencies: number[];
}

/**
 * Waves of calls (the memory scenario): every client first opens its keep-alive connection (a
 * `GET /v1/health`, spread at `connectPerSecond`), then all clients send one `POST /v1/availability` at
 * once and wait for its answer; the next wave starts once every call of the last one has its answer.
 * What is measured is the most calls the gateway holds at one time, without the closed loop's need to
 * turn 2,000 calls a second around on a shared two-core machine.
 */
export async function runWaves(options: WaveOptions): Promise<WaveFigures[]> {
  const clients = options.accounts.flatMap((account) =>
    Array.from({ length: account.clients }, () => ({
      key: account.key,
      connection: openConnection(options.url),
    })),
  );
  const started = performance.now();
  await Promise.all(
    clients.map(async ({ connection }, index) => {
      const delay = started + (index * 1000) / options.connectPerSecond - performance.now();
      if (delay > 0) await sleep(delay);
      const answer = await connection.request({ path: '/v1/health', method: 'GET' });
      await answer.body.dump();
    }),
  );
  options.onConnected?.();
  const figures: WaveFigures[] = [];
  for (let wave = 0; wave < options.waves; wave++) {
    const figure: WaveFigures = {
      calls: clients.length,
      successes: 0,
      failures: {},
      waveMs: 0,
      latencies: [],
    };
    const fired = performance.now();
    await Promise.all(
      clients.map(async ({ key, connection }) => {
        const sent = performance.now();
        try {
          const answer = await connection.request({
            path: '/v1/availability',
            method: 'POST',
            headers: availabilityHeaders(key),
            body: options.body,
          });
          const text = await answer.body.text();
          if (answer.statusCode === 200) {
            figure.successes++;
            figure.latencies.push(performance.now() - sent);
            return;
          }
          count(figure.failures, errorKind(answer.statusCode, text));
        } catch (error) {
          count(figure.failures, (error as { code?: string }).code ?? 'error');
        }
      }),
    );
    figure.waveMs = performance.now() - fired;
    figures.push(figure);
  }
  await Promise.all(clients.map(({ connection }) => connection.destroy()));
  return figures;
}
