/**
 * The gateway a benchmark starts, set up as `npm start` would run it: a catalogue whose wholesaler
 * `bench` has the benchmark's upstream as its live server, SQLite in the benchmark's folder, a clean
 * environment (no REDIS_URL, CONFIG_FILE, … from the shell), and live keys made with `keys create`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from './processes.js';

export function benchGatewayEnv(options: {
  folder: string;
  /** The upstream's base URL, and how the catalogue names it. */
  upstream: { baseUrl: string; name: string };
  /** The SQLite file's name in `folder`. */
  databaseFile: string;
  /** Settings on top of the common ones (rate limits, WORKERS, …). */
  settings: Record<string, string>;
}): NodeJS.ProcessEnv {
  mkdirSync(options.folder, { recursive: true });
  const catalogue = join(options.folder, 'catalogue.json');
  writeFileSync(
    catalogue,
    JSON.stringify({
      wholesalers: [
        { id: 'bench', name: options.upstream.name, version: 2, live: { baseUrl: options.upstream.baseUrl } },
      ],
    }),
  );
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: `sqlite:${join(options.folder, options.databaseFile)}`,
    WHOLESALER_CATALOGUE: catalogue,
    LOG_LEVEL: 'info',
    ...options.settings,
  };
}

/** A key of `mode` named `name`, created with the gateway's CLI (`cli`) on the database of `env`. */
export function createKey(env: NodeJS.ProcessEnv, name: string, mode: 'live' | 'test', cli = CLI): string {
  const created = execFileSync(
    process.execPath,
    [cli, 'keys', 'create', '--name', name, '--mode', mode, '--json'],
    { env, encoding: 'utf8' },
  );
  return (JSON.parse(created) as { key: string }).key;
}

/** A live key named `name` (`createKey`). */
export function createLiveKey(env: NodeJS.ProcessEnv, name: string, cli = CLI): string {
  return createKey(env, name, 'live', cli);
}
