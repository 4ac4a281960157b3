import { sql } from 'kysely';
import { pendingMigrations } from '../store/migrate.js';
import type { AppDeps } from './app-deps.js';

/** A readiness probe that waits longer than this for the database counts it as unreachable. */
const READINESS_DATABASE_TIMEOUT_MS = 2_000;
/** What a not-ready answer suggests as Retry-After, in seconds. */
export const READINESS_RETRY_AFTER_S = 5;

export interface Readiness {
  /** What is missing, in words (`the database does not answer`); empty when ready. */
  problems: string[];
  webhookWorker: 'running' | 'disabled';
}

/**
 * What readiness checks (docs/operating.md "Health probes"): the database answers within 2 s, every
 * migration is applied, the webhook worker runs where it is enabled. Answered by `GET /v1/health/ready`
 * on PORT and, with HEALTH_PORT, asked for by the health listener's thread (`health-listener.ts`).
 */
export async function checkReadiness(
  deps: Pick<AppDeps, 'config' | 'database' | 'webhooks'>,
): Promise<Readiness> {
  const problems: string[] = [];
  const pending = await withTimeout(
    (async () => {
      await sql`select 1`.execute(deps.database.db);
      return pendingMigrations(deps.database);
    })(),
    READINESS_DATABASE_TIMEOUT_MS,
  ).catch(() => undefined);
  if (pending === undefined) problems.push('the database does not answer');
  else if (pending.length > 0) problems.push(`migrations not applied: ${pending.join(', ')}`);
  const workerEnabled = deps.config.webhooks.workerEnabled;
  if (workerEnabled && !deps.webhooks.worker.running) problems.push('the webhook worker is not running');
  return { problems, webhookWorker: workerEnabled ? 'running' : 'disabled' };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
