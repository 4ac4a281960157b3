import type { Gateway } from './gateway.js';
import type { OwnPostgres } from './postgres.js';
import type { OwnRedis } from './redis.js';

/** What every check gets from the orchestration in `run.ts`. */
export interface BatteryContext {
  short: boolean;
  postgres: OwnPostgres;
  redis: OwnRedis;
  /** Every gateway started, so that `run.ts` kills what a failed check left behind. */
  gateways: Gateway[];
  /** A progress line (stderr). */
  log(line: string): void;
  seed: number;
}
