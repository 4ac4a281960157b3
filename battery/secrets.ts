import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIO_PZNS } from '../src/mock/index.js';
import { writeLoopbackCatalogue } from './catalogue.js';
import type { BatteryContext } from './context.js';
import { baseEnv, provisionKeys, startGateway } from './gateway.js';
import { type Row, row } from './report.js';

/**
 * The passwords of the multi-wholesaler form (`X-MSV3-Credentials`, docs/split-orders.md) searched
 * where a gateway could leave them: split orders (dry run, placed, replayed) and a compare request
 * over three sandbox wholesalers, each login a random marker password
 * in both forms (a pair of strings, a byte sequence of `user:password`), plus a malformed header holding
 * one. Then every row of every table of its database, the PostgreSQL server's WAL files and log, the
 * gateway's output at LOG_LEVEL=debug, and the OTLP exports it sent to a collector of this check's own
 * are searched for the markers and the base64 forms. The search proves it looks at real data: the
 * logins' user names must turn up in the rows and the WAL, and the split's spans in the exports.
 */

const WHOLESALERS = ['phoenix', 'alliance', 'sanacorp'] as const;
const CHECK = 'secrets: multi-wholesaler passwords stored';

export async function secretsCheck(ctx: BatteryContext): Promise<Row[]> {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-battery-secrets-'));
  const collector = await startCollector();
  try {
    const databaseUrl = await ctx.postgres.createDatabase('secrets');
    const keys = await provisionKeys(databaseUrl);
    const gateway = await startGateway(
      {
        ...baseEnv(databaseUrl),
        LOG_LEVEL: 'debug',
        WHOLESALER_CATALOGUE: writeLoopbackCatalogue(
          folder,
          WHOLESALERS.map((id) => ({ id, version: 2 as const })),
        ),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      },
      ctx.gateways,
    );
    const run = randomBytes(4).toString('hex');
    const user = `apobattery${run}`;
    const password = (w: string) => `Split-${w}-${randomBytes(6).toString('hex')}!#`;
    const logins = WHOLESALERS.map((w) => ({
      wholesaler: w,
      user: `${user}${w.slice(0, 2)}`,
      password: password(w),
    }));
    const basic = (l: (typeof logins)[number]) => Buffer.from(`${l.user}:${l.password}`).toString('base64');
    // phoenix as a pair of strings, alliance and sanacorp as byte sequences of user:password.
    const header = logins
      .map((l, i) =>
        i === 0 ? `${l.wholesaler}=("${l.user}" "${l.password}")` : `${l.wholesaler}=:${basic(l)}:`,
      )
      .join(', ');
    const secrets = [...logins.map((l) => l.password), ...logins.map(basic)];
    const body = {
      wholesalers: [...WHOLESALERS],
      items: [
        { pzn: '04114918', quantity: 2 },
        { pzn: SCENARIO_PZNS.ONLY_AT_ALLIANCE.pzn, quantity: 1 },
        { pzn: SCENARIO_PZNS.ONLY_AT_SANACORP.pzn, quantity: 1 },
      ],
    };
    const post = (path: string, headers: Record<string, string>, payload: unknown = body) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': keys.test, ...headers },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(30_000),
      }).then(async (r) => ({ status: r.status, text: await r.text() }));

    const key = randomUUID();
    const answers = [
      await post('/v1/orders/split?dry_run=true', { 'x-msv3-credentials': header }),
      await post('/v1/orders/split', { 'x-msv3-credentials': header, 'idempotency-key': key }),
      await post('/v1/orders/split', { 'x-msv3-credentials': header, 'idempotency-key': key }),
      await post('/v1/availability/compare', { 'x-msv3-credentials': header }),
      await post('/v1/orders/split', {
        'x-msv3-credentials': `phoenix=("${logins[0]!.user}" "${logins[0]!.password}"), alliance=(`,
        'idempotency-key': randomUUID(),
      }),
    ];
    const placed = answers[1]!;
    const problems: string[] = [];
    if (placed.status !== 200 || !placed.text.includes('"complete"'))
      problems.push(`the split was not placed (${placed.status}: ${placed.text.slice(0, 160)})`);
    if (answers[3]!.status !== 200) problems.push(`the compare request got ${answers[3]!.status}`);
    if (answers[4]!.status !== 400) problems.push(`a malformed X-MSV3-Credentials got ${answers[4]!.status}`);
    // A graceful stop flushes the spans and the logs.
    gateway.child.kill('SIGTERM');
    await gateway.exited;
    await ctx.postgres.query('secrets', 'checkpoint');

    const rows = await databaseText(ctx, 'secrets');
    const wal = filesText(ctx.postgres.walDir);
    const places: [string, string][] = [
      ['answers', answers.map((a) => a.text).join('\n')],
      ['database rows', rows],
      ['WAL', wal.text],
      [
        'PostgreSQL log',
        existsSync(ctx.postgres.logFile) ? readFileSync(ctx.postgres.logFile, 'latin1') : '',
      ],
      ['gateway output', gateway.output()],
      ['traces', collector.bodies.join('\n')],
    ];
    const found = places.flatMap(([place, text]) =>
      secrets.filter((s) => text.includes(s)).map((s) => `${place}: ${s.slice(0, 6)}…`),
    );
    // The search looks at real data: the user names are stored, the split traced.
    if (!logins.every((l) => rows.includes(l.user)))
      problems.push('the user names are not in the rows searched');
    if (!wal.text.includes(logins[0]!.user)) problems.push('the user names are not in the WAL searched');
    if (!collector.bodies.some((b) => b.includes('/v1/orders/split')))
      problems.push('no span of the split exported');
    const figures = `${found.length} of ${secrets.length} markers; ${rows.length} B rows, ${wal.files} WAL files (${wal.text.length} B), ${gateway.output().length} B output, ${collector.bodies.length} OTLP exports`;
    return [
      row(
        CHECK,
        figures,
        found.length === 0 && problems.length === 0,
        [...found.map((f) => `found in ${f}`), ...problems].join('; '),
      ),
    ];
  } finally {
    await collector.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function databaseText(ctx: BatteryContext, database: string): Promise<string> {
  const tables = await ctx.postgres.query<{ table_name: string }>(
    database,
    "select table_name from information_schema.tables where table_schema = 'public'",
  );
  let text = '';
  for (const { table_name } of tables) {
    const rows = await ctx.postgres.query(database, `select * from "${table_name}"`);
    text += `${table_name}\n${JSON.stringify(rows)}\n`;
  }
  return text;
}

/** Every file under `dir`, read as Latin-1 (binary segments keep their ASCII text). */
function filesText(dir: string): { files: number; text: string } {
  let files = 0;
  let text = '';
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        files++;
        text += readFileSync(path).toString('latin1');
      }
    }
  };
  walk(dir);
  return { files, text };
}

/** A minimal OTLP/HTTP collector: keeps every body it is sent. */
async function startCollector(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
