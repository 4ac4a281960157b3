import { Agent, request } from 'undici';

/**
 * The battery's HTTP client: every call has a deadline and ends as an answer (status, headers, body,
 * time taken) or as a failure (no answer: reset, refused, timed out), never as a thrown error.
 */

interface Answer {
  ok: true;
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

interface NoAnswer {
  ok: false;
  /** `timeout`, or the socket error code. */
  failure: string;
  ms: number;
}

export type Outcome = Answer | NoAnswer;

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
  agent?: Agent;
}

const sharedAgent = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 2_000 });

export async function call(url: string, options: CallOptions = {}): Promise<Outcome> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 15_000;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await request(url, {
      method: (options.method ?? 'GET') as 'GET',
      headers: options.headers,
      body: options.body,
      signal,
      dispatcher: options.agent ?? sharedAgent,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const body = await response.body.text();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { ok: true, status: response.statusCode, headers, body, ms: performance.now() - started };
  } catch (error) {
    const ms = performance.now() - started;
    if (signal.aborted) return { ok: false, failure: 'timeout', ms };
    const code = (error as { code?: string }).code ?? (error as Error).name;
    return { ok: false, failure: code, ms };
  }
}

/** JSON body of an answer, or undefined. */
export function jsonOf(outcome: Outcome): Record<string, unknown> | undefined {
  if (!outcome.ok) return undefined;
  try {
    return JSON.parse(outcome.body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Polls GET /v1/health every `everyMs` until stopped; reports the slowest answer and failures. */
export function watchHealth(baseUrl: string, everyMs = 50) {
  const agent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  let maxMs = 0;
  let polls = 0;
  let failures = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const outcome = await call(`${baseUrl}/v1/health`, { timeoutMs: 5_000, agent });
      polls++;
      if (!outcome.ok || outcome.status !== 200) failures++;
      maxMs = Math.max(maxMs, outcome.ms);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop(): Promise<{ maxMs: number; polls: number; failures: number }> {
      stopped = true;
      await loop;
      await agent.close();
      return { maxMs, polls, failures };
    },
  };
}
