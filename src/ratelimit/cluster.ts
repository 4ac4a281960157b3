import { createMemoryRateLimiter } from './memory.js';
import type { BudgetName, Budgets, RateLimitDecision, RateLimiter } from './rate-limiter.js';

/**
 * Rate limits of a WORKERS > 1 cluster with the memory store (src/cluster/): the primary counts every
 * budget for all its workers, so a key gets its budget once, not once per worker. A worker gathers what
 * its requests ask during one turn of its event loop and sends it as one message; the primary answers
 * with one message. Under load a turn holds several requests, so the two processes exchange far fewer
 * messages (each a JSON encode, a pipe write and a wake-up of the other process) than requests.
 */

/** How long a worker waits for the primary's answer before it counts in its own memory instead. */
const PRIMARY_TIMEOUT_MS = 1_000;

/** One question to the primary's budgets. */
interface RateLimitAsk {
  op: 'consume' | 'peek';
  key: string;
  budget: BudgetName;
}

/** Worker → primary: the asks of one turn of the worker's event loop, numbered by the worker. */
export interface RateLimitBatch {
  type: 'rate-limit';
  batch: number;
  asks: RateLimitAsk[];
}

/** Primary → worker: the decisions for one batch, in the order asked. */
export interface RateLimitAnswers {
  type: 'rate-limit-answers';
  batch: number;
  decisions: RateLimitDecision[];
}

/** The primary's side: all workers' budgets, counted as one process counts them (`createMemoryRateLimiter`). */
export interface ClusterRateLimits {
  answer(batch: RateLimitBatch): Promise<RateLimitDecision[]>;
}

export function serveClusterRateLimits(budgets: Budgets): ClusterRateLimits {
  const limiter = createMemoryRateLimiter(budgets);
  return {
    answer: ({ asks }) => Promise.all(asks.map((ask) => decide(limiter, ask))),
  };
}

/** One ask, put to a limiter (the primary's, or a worker's own when the primary is silent). */
function decide(limiter: RateLimiter, { op, key, budget }: RateLimitAsk): Promise<RateLimitDecision> {
  return op === 'consume' ? limiter.consume(key, budget) : limiter.peek(key, budget);
}

/** A worker's limiter: `receive` takes the primary's answers (src/cluster/worker.ts routes them here). */
export interface ClusterRateLimiter extends RateLimiter {
  receive(answers: RateLimitAnswers): void;
}

interface Waiting {
  ask: RateLimitAsk;
  resolve(decision: RateLimitDecision): void;
  reject(reason: unknown): void;
}

/**
 * A cluster worker's limiter with the memory store: every ask is counted by the primary
 * (`serveClusterRateLimits`). If the primary does not answer a batch within a second (or the message
 * cannot be sent), the worker counts that batch in its own memory, as the PostgreSQL limiter does when
 * the database fails; an answer that comes later is dropped.
 */
export function createClusterRateLimiter(
  budgets: Budgets,
  send: (batch: RateLimitBatch) => void,
  options: { timeoutMs?: number } = {},
): ClusterRateLimiter {
  const own = createMemoryRateLimiter(budgets);
  const timeoutMs = options.timeoutMs ?? PRIMARY_TIMEOUT_MS;
  const sent = new Map<number, { waiting: Waiting[]; timer: NodeJS.Timeout }>();
  let gathering: Waiting[] = [];
  let lastBatch = 0;

  function countHere(waiting: readonly Waiting[]): void {
    for (const { ask, resolve, reject } of waiting) decide(own, ask).then(resolve, reject);
  }

  function flush(): void {
    const waiting = gathering;
    gathering = [];
    lastBatch += 1;
    const batch = lastBatch;
    const timer = setTimeout(() => {
      sent.delete(batch);
      countHere(waiting);
    }, timeoutMs);
    // A pending request keeps the server up; the timer alone need not keep the process.
    timer.unref();
    sent.set(batch, { waiting, timer });
    try {
      send({ type: 'rate-limit', batch, asks: waiting.map((w) => w.ask) });
    } catch {
      clearTimeout(timer);
      sent.delete(batch);
      countHere(waiting);
    }
  }

  function ask(op: RateLimitAsk['op'], key: string, budget: BudgetName): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      // The first ask of a turn schedules the message; the others of the same turn join it.
      if (gathering.length === 0) setImmediate(flush);
      gathering.push({ ask: { op, key, budget }, resolve, reject });
    });
  }

  return {
    consume: (key, budget) => ask('consume', key, budget),
    peek: (key, budget) => ask('peek', key, budget),
    receive({ batch, decisions }) {
      const entry = sent.get(batch);
      if (entry === undefined) return; // counted here already, after the timeout
      sent.delete(batch);
      clearTimeout(entry.timer);
      entry.waiting.forEach((waiting, i) => {
        const decision = decisions[i];
        if (decision === undefined) countHere([waiting]);
        else waiting.resolve(decision);
      });
    },
    close: async () => {},
  };
}
