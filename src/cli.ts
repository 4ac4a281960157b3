#!/usr/bin/env node
import cluster from 'node:cluster';
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { runPrimary } from './cluster/primary.js';
import { workerCount, workerSlot } from './cluster/role.js';
import { joinCluster, type PrimaryLink } from './cluster/worker.js';
import {
  type Config,
  ConfigError,
  listSettings,
  loadConfig,
  misspeltVariableMessage,
  misspeltVariables,
} from './config.js';
import type { KeyMode } from './core/key-mode.js';
import { VERSION } from './core/version.js';
import { holdSignals, type SignalSource } from './held-signals.js';
import { systemClock } from './lib/clock.js';
import { MOCK_OPTIONS, MOCK_SUMMARY, MOCK_USAGE, runMockCommand } from './mock/command.js';
import { createLogger } from './observability/logger.js';
import { EXIT_GRACE_MS, exitOnSignals, type RunningServer, startServer } from './server.js';
import { warnMisspeltVariables } from './startup-summary.js';
import { createAccount, findAccount } from './store/accounts.js';
import { displayParts, hashApiKey } from './store/api-key-secret.js';
import {
  type ApiKey,
  createApiKey,
  findApiKey,
  findApiKeyByHash,
  listApiKeys,
  revokeApiKey,
} from './store/api-keys.js';
import { type Database, openDatabase, sqliteFile } from './store/database.js';
import { databaseStartError } from './store/database-start-error.js';
import { migrateToLatest } from './store/migrate.js';
import type { Tables } from './store/schema.js';
import {
  LISTEN_OPTIONS,
  LISTEN_SUMMARY,
  LISTEN_USAGE,
  runListenCommand,
} from './webhooks/events/listen-command.js';

/** Where a command reads its environment and writes its output (the real process, or a test). */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(line: string): void;
  stderr(line: string): void;
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

interface Command {
  usage: string;
  summary: string;
  options?: ParseArgsConfig['options'];
  positionals?: number;
  /** Resolves to the exit code. */
  run(args: { values: Values; positionals: string[] }, io: CliIo): Promise<number>;
}

/**
 * From here a signal stops the gateway gracefully, however early it comes (held-signals.ts); the process
 * exits at once only when start-up has not finished in time or a second signal follows.
 */
function heldSignals(logger: Logger, config: Config): SignalSource {
  return holdSignals({
    logger,
    exit: (code) => process.exit(code),
    limitMs: config.server.shutdownTimeoutMs + EXIT_GRACE_MS,
  });
}

/** Every sub-command. To add one, add an entry: the key is what the user types before the options. */
const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'serve',
    summary: 'Start the gateway (migrates the database first); WORKERS > 1 runs that many worker processes.',
    run: async (_args, io) => {
      const config = loadConfig(io.env);
      const slot = workerSlot(io.env, cluster.isWorker);
      const workers = workerCount(config.server.workers);
      if (slot === undefined && workers > 1) {
        if (cluster.isWorker) {
          io.stderr(
            'msv3-gateway: WORKERS > 1 cannot run inside another cluster (pm2 cluster mode); set WORKERS=1.',
          );
          return 1;
        }
        const logger = createLogger({ level: config.log.level, base: { worker: 0, pid: process.pid } });
        const signals = heldSignals(logger, config);
        warnMisspeltVariables(logger, io.env);
        return runPrimary({
          config,
          workers,
          env: io.env,
          logger,
          signals,
          print: io.stderr,
          printSecret: io.stdout,
        });
      }
      const worker = slot === undefined ? undefined : joinCluster(slot, config, primaryLink());
      const logger = worker?.logger ?? createLogger({ level: config.log.level });
      const signals = heldSignals(logger, config);
      if (worker === undefined) warnMisspeltVariables(logger, io.env);
      let server: RunningServer;
      try {
        // The first key goes to stdout as plain lines, never into a log record. A worker prints nothing:
        // its primary prints the lines once for all.
        server = await startServer({
          config,
          logger,
          print: worker === undefined ? io.stderr : () => {},
          printSecret: worker === undefined ? io.stdout : () => {},
          ...worker?.startOptions,
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        const { host, port } = config.server;
        io.stderr(
          `msv3-gateway: ${host}:${port} is already in use (EADDRINUSE); set PORT (or HOST) to a free one.`,
        );
        return 1;
      }
      return new Promise<number>((resolve) => {
        const { stop } = exitOnSignals(server, logger, resolve, signals);
        worker?.started(server, stop);
      });
    },
  },
  migrate: {
    usage: 'migrate',
    summary: 'Apply pending database migrations and exit.',
    run: (_args, io) =>
      withDatabase(
        io,
        async (database) => {
          const applied = await migrateToLatest(database);
          io.stdout(applied.length === 0 ? 'Database is up to date.' : `Applied: ${applied.join(', ')}`);
          return 0;
        },
        { migrate: false },
      ),
  },
  'keys create': {
    usage: 'keys create --name NAME --mode test|live [--account ID] [--json]',
    summary: 'Create an API key (in a new account unless --account is given); prints it once.',
    options: {
      name: { type: 'string' },
      mode: { type: 'string' },
      account: { type: 'string' },
      json: { type: 'boolean' },
    },
    run: ({ values }, io) =>
      withDatabase(io, async ({ db }) => {
        const name = values.name;
        const mode = values.mode;
        if (typeof name !== 'string' || name.trim() === '')
          return usageError(io, 'keys create', '--name is required');
        if (mode !== 'test' && mode !== 'live')
          return usageError(io, 'keys create', '--mode must be test or live');
        let accountId = values.account;
        if (typeof accountId === 'string') {
          if ((await findAccount(db, accountId)) === undefined) {
            io.stderr(`msv3-gateway: no account ${accountId}`);
            return 1;
          }
        } else {
          accountId = (await createAccount(db, systemClock, { name })).id;
        }
        const { apiKey, secret } = await createApiKey(db, systemClock, {
          accountId,
          name,
          mode: mode as KeyMode,
        });
        if (values.json) {
          io.stdout(JSON.stringify({ id: apiKey.id, account_id: accountId, name, mode, key: secret }));
        } else {
          io.stdout(
            `Created ${mode} key ${apiKey.id} "${name}" in account ${accountId}. It is shown only this once:`,
          );
          io.stdout(secret);
        }
        return 0;
      }),
  },
  'keys list': {
    usage: 'keys list [--account ID] [--json]',
    summary: 'List API keys (never the secrets).',
    options: { account: { type: 'string' }, json: { type: 'boolean' } },
    run: ({ values }, io) =>
      withDatabase(io, async ({ db }) => {
        const accountId = typeof values.account === 'string' ? values.account : undefined;
        const keys = await listApiKeys(db, { accountId });
        if (values.json) io.stdout(JSON.stringify(keys));
        else if (keys.length === 0) io.stdout('No API keys.');
        else for (const line of formatKeyTable(keys)) io.stdout(line);
        return 0;
      }),
  },
  'keys revoke': {
    usage: 'keys revoke KEY_ID|KEY',
    summary: 'Revoke an API key at once, named by its id (key_…, see keys list) or by the key itself.',
    positionals: 1,
    run: ({ positionals }, io) =>
      withDatabase(io, async ({ db }) => {
        const named = positionals[0];
        if (named === undefined) return usageError(io, 'keys revoke', 'the key id or the key is required');
        const before = await findNamedKey(db, named);
        if (before === undefined) return noSuchKey(io, named);
        const now = systemClock.now();
        const after = await revokeApiKey(db, systemClock, before.id, now);
        const shown = `${before.id} (${before.prefix}…${before.last4})`;
        io.stdout(
          before.revokedAt !== null && before.revokedAt <= now
            ? `${shown} was already revoked at ${iso(after?.revokedAt)}.`
            : `Revoked ${shown}.`,
        );
        return 0;
      }),
  },
  'keys roll': {
    usage: 'keys roll KEY_ID|KEY [--overlap DURATION] [--json]',
    summary:
      'Replace an API key: a new key of the same account, mode and name; the old one stays valid for ' +
      'the overlap (default 24h; e.g. 0, 90s, 30m, 12h, 7d), then is refused. Prints the new key once.',
    options: { overlap: { type: 'string' }, json: { type: 'boolean' } },
    positionals: 1,
    run: ({ values, positionals }, io) =>
      withDatabase(io, async ({ db }) => {
        const named = positionals[0];
        if (named === undefined) return usageError(io, 'keys roll', 'the key id or the key is required');
        const overlapMs = parseDuration(typeof values.overlap === 'string' ? values.overlap : '24h');
        if (overlapMs === undefined) {
          return usageError(io, 'keys roll', '--overlap must be a duration such as 0, 90s, 30m, 12h or 7d');
        }
        const old = await findNamedKey(db, named);
        if (old === undefined) return noSuchKey(io, named);
        const now = systemClock.now();
        if (old.revokedAt !== null && old.revokedAt <= now) {
          io.stderr(
            `msv3-gateway: ${old.id} is revoked; create a new key with keys create --account ${old.accountId}`,
          );
          return 1;
        }
        const { apiKey, secret } = await createApiKey(db, systemClock, {
          accountId: old.accountId,
          name: old.name,
          mode: old.mode,
        });
        const rolled = await revokeApiKey(db, systemClock, old.id, now + overlapMs);
        const until = iso(rolled?.revokedAt);
        if (values.json) {
          io.stdout(
            JSON.stringify({
              id: apiKey.id,
              account_id: old.accountId,
              name: old.name,
              mode: old.mode,
              key: secret,
              replaces: old.id,
              old_key_valid_until: until,
            }),
          );
        } else {
          io.stdout(
            `Created ${old.mode} key ${apiKey.id} "${old.name}" in account ${old.accountId}. It is shown only this once:`,
          );
          io.stdout(secret);
          io.stdout(`The old key ${old.id} (${old.prefix}…${old.last4}) is refused from ${until}.`);
        }
        return 0;
      }),
  },
  mock: {
    usage: MOCK_USAGE,
    summary: MOCK_SUMMARY,
    options: MOCK_OPTIONS,
    run: ({ values }, io) => runMockCommand(values, io, loadConfig(io.env).mock),
  },
  listen: {
    usage: LISTEN_USAGE,
    summary: LISTEN_SUMMARY,
    options: LISTEN_OPTIONS,
    run: ({ values }, io) => runListenCommand(values, io),
  },
};

/** Runs one command line; resolves to the process exit code (0 ok, 1 failure, 2 usage). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    for (const line of helpText()) io.stdout(line);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === '--version') {
    io.stdout(VERSION);
    return 0;
  }
  const name = Object.keys(COMMANDS)
    .filter((candidate) => candidate.split(' ').every((word, i) => argv[i] === word))
    .sort((a, b) => b.length - a.length)[0];
  const group = Object.keys(COMMANDS).filter((candidate) => candidate.startsWith(`${argv[0]} `));
  if (name === undefined && group.length > 0) {
    const asked = argv[1] === undefined || ['--help', '-h', 'help'].includes(argv[1]);
    if (!asked) io.stderr(`msv3-gateway: unknown command "${argv.join(' ')}".`);
    const write = asked ? io.stdout : io.stderr;
    write(`Usage: msv3-gateway ${argv[0]} <command> [options]`);
    for (const sub of group) write(`  ${COMMANDS[sub]!.usage}\n      ${COMMANDS[sub]!.summary}`);
    write(`Run msv3-gateway ${argv[0]} <command> --help for one command.`);
    return argv[1] !== undefined && asked ? 0 : 2;
  }
  if (name === undefined) {
    io.stderr(`msv3-gateway: unknown command "${argv.join(' ')}". See msv3-gateway --help.`);
    return 2;
  }
  const command = COMMANDS[name]!;
  const rest = argv.slice(name.split(' ').length);
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(`Usage: msv3-gateway ${command.usage}`);
    io.stdout(command.summary);
    return 0;
  }
  let args: { values: Values; positionals: string[] };
  try {
    args = parseArgs({
      args: [...rest],
      options: command.options ?? {},
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return usageError(io, name, (error as Error).message);
  }
  if (args.positionals.length > (command.positionals ?? 0)) {
    return usageError(io, name, `unexpected argument "${args.positionals.at(-1)}"`);
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`msv3-gateway: configuration error: ${error.message}`);
      return 1;
    }
    io.stderr(`msv3-gateway: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** A cluster worker's channel to its primary. */
function primaryLink(): PrimaryLink {
  return {
    send: (message) => process.send?.(message),
    onMessage: (listener) => process.on('message', listener),
  };
}

/** Opens the configured database (migrated first, unless told not to) for one command. */
async function withDatabase(
  io: CliIo,
  work: (database: Database, config: Config) => Promise<number>,
  options: { migrate?: boolean } = {},
): Promise<number> {
  const config = loadConfig(io.env);
  for (const misspelt of misspeltVariables(io.env)) {
    io.stderr(`msv3-gateway: warning: ${misspeltVariableMessage(misspelt)}; it is ignored.`);
  }
  const file = sqliteFile(config.database.url);
  if (options.migrate !== false && file !== undefined && !existsSync(file)) {
    // A relative DATABASE_URL counts from the working directory: from another folder, a key command
    // would otherwise work on a new, empty database without a word.
    io.stderr(
      `msv3-gateway: warning: there is no database at ${file} yet, so a new, empty one is created ` +
        `(DATABASE_URL=${config.database.url}; a relative path counts from ${resolve('.')}).`,
    );
  }
  const database = await openDatabase(config.database.url).catch((error: unknown) => {
    throw databaseStartError(config.database.url, error);
  });
  try {
    if (options.migrate !== false) await migrateToLatest(database);
    return await work(database, config);
  } finally {
    await database.close();
  }
}

function usageError(io: CliIo, name: string, problem: string): number {
  io.stderr(`msv3-gateway ${name}: ${problem}`);
  io.stderr(`Usage: msv3-gateway ${COMMANDS[name]?.usage ?? name}`);
  return 2;
}

function helpText(): string[] {
  return [
    `msv3-gateway ${VERSION}: JSON/HTTP gateway in front of MSV3 wholesalers.`,
    '',
    'Usage: msv3-gateway <command> [options]',
    '',
    ...Object.values(COMMANDS).flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    '',
    'Configuration comes from environment variables (and a JSON file named by CONFIG_FILE):',
    ...listSettings().map(
      (s) => `  ${s.env}${s.schema.default === undefined ? '' : `=${String(s.schema.default)}`}`,
    ),
  ];
}

function formatKeyTable(keys: ApiKey[]): string[] {
  const now = systemClock.now();
  const rows = keys.map((k) => [
    k.id,
    k.accountId,
    k.mode,
    `${k.prefix}…${k.last4}`,
    k.name,
    iso(k.createdAt),
    k.lastUsedAt === null ? 'never' : iso(k.lastUsedAt),
    keyStatus(k, now),
  ]);
  const table = [['ID', 'ACCOUNT', 'MODE', 'KEY', 'NAME', 'CREATED', 'LAST USED', 'STATUS'], ...rows];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  return table.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}

function keyStatus(key: ApiKey, now: number): string {
  if (key.revokedAt === null) return 'active';
  return key.revokedAt > now ? `active until ${iso(key.revokedAt)}` : `revoked ${iso(key.revokedAt)}`;
}

/** A key named on the command line by its id (`key_…`) or by the key itself (`pk_test_…`, `pk_live_…`). */
async function findNamedKey(db: Kysely<Tables>, named: string): Promise<ApiKey | undefined> {
  if (looksLikeKey(named)) return findApiKeyByHash(db, hashApiKey(named));
  return findApiKey(db, named);
}

function noSuchKey(io: CliIo, named: string): number {
  const { prefix, last4 } = displayParts(named);
  const shown = looksLikeKey(named) ? `${prefix}…${last4}` : named;
  io.stderr(
    `msv3-gateway: no API key ${shown} (name a key by its id, key_…, as keys list shows, or by the key itself)`,
  );
  return 1;
}

/** A secret is never echoed whole, even a mistyped one. */
function looksLikeKey(named: string): boolean {
  return named.startsWith('pk_');
}

/** `0`, `90s`, `30m`, `12h`, `7d` (a bare number is seconds) → milliseconds; undefined if unreadable. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (match === null) return undefined;
  const unit = { '': 1_000, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as '' | 's' | 'm' | 'h' | 'd'
  ];
  return Number(match[1]) * unit;
}

function iso(epochMs: number | null | undefined): string {
  return epochMs == null ? '-' : new Date(epochMs).toISOString();
}

function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const io: CliIo = {
    env: process.env,
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  };
  // Exit explicitly: a stray handle (a reconnecting client, a timer) must not keep a stopped gateway alive.
  runCli(process.argv.slice(2), io).then((code) => process.exit(code));
}
