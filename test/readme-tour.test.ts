import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import {
  readTour,
  runTourWithFetch,
  type Started,
  startGatewayAsNpmStartDoes,
  type TourExchange,
  type TourRun,
  tokenize,
  tourScript,
} from './readme-tour.js';

/**
 * The README's "First ten minutes" must work as printed against `npm start`, and again when it is run a
 * second time with the same key (fixed Idempotency-Keys once replayed the first run's order, so the
 * second found no new delivery notice and saved an error as the PDF). The commands are read out of the
 * README (editing it changes what runs), and each way of running them gets a freshly started gateway
 * (`startServer`, as `npm start` does, on a temporary SQLite database, port 0) whose first-start key is
 * taken from what it prints; the tour then runs twice against it, with that key:
 *  1. always: every command as its exact HTTP request over a real socket (fetch; test/readme-tour.ts);
 *  2. when bash, curl (≥ 7.76) and jq are installed: the commands themselves, each run in one bash
 *     script with `set -euo pipefail` (its own shell, so its own `$$`) in the same folder, and a curlrc
 *     that reports each status.
 * Either fails when a command stops working: a non-2xx answer, a missing value, an unknown option.
 */

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the tour keeps its files: a folder git ignores, so running it leaves the checkout clean. */
const TOUR_FILES = '.scratch/tour';

/** What each step of the tour must show; every step must appear in the README. */
const STEPS: {
  name: string;
  method: string;
  path: RegExp;
  check(exchange: TourExchange, run: TourRun): void;
}[] = [
  {
    name: 'health',
    method: 'GET',
    path: /^\/v1\/health$/,
    check: ({ json }) => expect(json).toMatchObject({ status: 'ok' }),
  },
  {
    name: 'list wholesalers',
    method: 'GET',
    path: /^\/v1\/wholesalers$/,
    check: ({ json }) =>
      expect((json as { wholesalers: { id: string }[] }).wholesalers.map((w) => w.id)).toContain('phoenix'),
  },
  {
    name: 'availability',
    method: 'POST',
    path: /^\/v1\/availability$/,
    check: ({ json }) => {
      const items = (json as { items: { available: boolean; substitution: unknown }[] }).items;
      expect(items.length).toBeGreaterThan(1);
      expect(items.some((item) => !item.available)).toBe(true); // a scenario PZN made it interesting
    },
  },
  {
    name: 'dry run',
    method: 'POST',
    path: /^\/v1\/orders\?dry_run=true$/,
    check: ({ json }) => expect(json).toMatchObject({ status: 'dry_run', dry_run: true }),
  },
  {
    name: 'order',
    method: 'POST',
    path: /^\/v1\/orders$/,
    check: ({ json, request }) => {
      expect(Object.keys(request.headers).map((h) => h.toLowerCase())).toContain('idempotency-key');
      expect(json).toMatchObject({ status: 'confirmed', order_id: expect.stringMatching(/^GW-/) });
    },
  },
  {
    name: 'order retried with the same key',
    method: 'POST',
    path: /^\/v1\/orders$/,
    check: ({ json, headers, request }, run) => {
      const [order, retry] = run.exchanges.filter(
        (e) => e.request.method === 'POST' && e.request.url === request.url,
      );
      expect(retry?.request).toBe(request);
      expect(request.headers['Idempotency-Key']).toBe(order!.request.headers['Idempotency-Key']);
      expect(request.body).toBe(order!.request.body);
      expect(headers.get('idempotent-replayed')).toBe('true');
      expect(json).toMatchObject({ status: 'confirmed', order_id: run.vars.ORDER });
    },
  },
  {
    name: 'order status',
    method: 'GET',
    path: /^\/v1\/orders\/GW-[^/]+\/status\?wholesaler=phoenix$/,
    check: ({ json }, run) => expect(json).toMatchObject({ order_id: run.vars.ORDER, status: 'available' }),
  },
  {
    name: 'deliveries',
    method: 'GET',
    path: /^\/v1\/deliveries\?wholesaler=phoenix$/,
    check: ({ json }, run) => {
      const { deliveries } = json as { deliveries: { tracking_number: string; document_id: string }[] };
      expect(deliveries[0]).toMatchObject({
        tracking_number: expect.stringMatching(/^LS/),
        document_id: expect.any(String),
      });
      expect(deliveries.at(-1)).toMatchObject({
        tracking_number: run.vars.TRACKING,
        document_id: run.vars.DOC,
      });
    },
  },
  {
    name: 'confirm',
    method: 'POST',
    path: /^\/v1\/deliveries\/confirm$/,
    check: ({ json }, run) => expect(json).toMatchObject({ confirmed: [run.vars.TRACKING] }),
  },
  {
    name: 'history',
    method: 'GET',
    path: /^\/v1\/deliveries\/history\?wholesaler=phoenix$/,
    check: ({ json }, run) =>
      expect((json as { deliveries: unknown[] }).deliveries[0]).toMatchObject({
        tracking_number: run.vars.TRACKING,
        confirmed_at: expect.any(String),
      }),
  },
  {
    name: 'return enquiry',
    method: 'POST',
    path: /^\/v1\/returns$/,
    check: ({ json }) => expect(json).toMatchObject({ items: [{ accepted: true }] }),
  },
  {
    name: 'return announcement',
    method: 'POST',
    path: /^\/v1\/returns\/announce$/,
    check: ({ json }) =>
      expect(json).toMatchObject({
        portions: [{ accepted: true, reference: expect.stringMatching(/^RET-/) }],
      }),
  },
  {
    name: 'document download',
    method: 'GET',
    path: /^\/v1\/documents\/[0-9a-f-]{36}\?wholesaler=phoenix$/,
    check: ({ headers }, run) => {
      expect(headers.get('content-type')).toBe('application/pdf');
      expect(run.files.get(`${TOUR_FILES}/lieferschein.pdf`)?.subarray(0, 5).toString()).toBe('%PDF-');
    },
  },
  {
    name: 'events feed',
    method: 'GET',
    path: /^\/v1\/events\?limit=3$/,
    check: ({ json }) => {
      const events = (json as { events: { type: string; id: string }[] }).events;
      expect(events).toHaveLength(3);
      for (const event of events) expect(event.id).toMatch(/^evt_/);
      // This run's order was delivered short: its notice raised both delivery events.
      expect(events.map((e) => e.type)).toEqual(
        expect.arrayContaining(['delivery.received', 'delivery.shortage']),
      );
    },
  },
];

describe('README "First ten minutes"', () => {
  it('reads the commands out of the README', () => {
    const commands = readTour(README);
    expect(commands[0]!.text).toBe('KEY=pk_test_…');
    expect(commands.filter((c) => c.text.startsWith('curl ')).length).toBe(STEPS.length);
    expect(commands.filter((c) => c.heredoc !== undefined).length).toBeGreaterThan(0);
  });

  it('writes its files only into a folder git ignores', async () => {
    const commands = readTour(README);
    expect(commands.map((c) => c.text)).toContain(`mkdir -p ${TOUR_FILES}`);
    const written = commands.flatMap((c) =>
      [...c.text.matchAll(/(?:\| tee|-o) (\S+)/g)].map((match) => match[1]!),
    );
    expect(written.length).toBeGreaterThanOrEqual(4);
    for (const file of written) expect(file.startsWith(`${TOUR_FILES}/`), file).toBe(true);
    const ignored = spawnSync('git', ['check-ignore', '--no-index', ...written, TOUR_FILES], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(ignored.stdout.trim().split('\n').sort()).toEqual([...written, TOUR_FILES].sort());
  });

  it('refuses what it cannot run exactly, so the README cannot drift past the test', async () => {
    const run = (text: string) => runTourWithFetch([{ text }], 'http://127.0.0.1:9', 'k');
    await expect(run('curl --json {} http://127.0.0.1:8080/v1/health')).rejects.toThrow(/unsupported curl/);
    await expect(run('curl -s https://example.org/v1/health')).rejects.toThrow(/must call/);
    await expect(run('wget http://127.0.0.1:8080/v1/health')).rejects.toThrow(/only curl/);
    await expect(run('curl -s "http://127.0.0.1:8080/v1/orders/$ORDER"')).rejects.toThrow(/ORDER is not set/);
    await expect(run('RUN=$(uuidgen)')).rejects.toThrow(/only NAME=\$\(jq/);
    await expect(run('curl --fail --fail-with-body http://127.0.0.1:8080/v1/health')).rejects.toThrow(
      /exclude/,
    );
    await expect(run('curl -si http://127.0.0.1:8080/v1/health | jq .')).rejects.toThrow(/only \| grep/);
    await expect(run('curl -s http://127.0.0.1:8080/v1/health -o health.json')).rejects.toThrow(
      /not in a folder the tour made/,
    );
    await expect(run('MSV3_API_KEY=k npx tsx src/cli.ts listen --print --once')).rejects.toThrow(/--url/);
    await expect(run('X=1 curl -s http://127.0.0.1:8080/v1/health')).rejects.toThrow(/only listen takes/);
    expect(tokenize(`a 'b $X' "c $X" d\\ e`, { X: 'x' })).toEqual([
      { word: 'a' },
      { word: 'b $X' },
      { word: 'c x' },
      { word: 'd\\' },
      { word: 'e' },
    ]);
    expect(tokenize('x-$$ "$$"', { $: '42' })).toEqual([{ word: 'x-42' }, { word: '42' }]);
  });

  describe('as HTTP requests (fetch), run twice with one key', () => {
    let started: Started;
    const runs: TourRun[] = [];

    beforeAll(async () => {
      started = await startGatewayAsNpmStartDoes();
      for (let i = 0; i < 2; i++) {
        // Test keys may make 25 requests a second (docs/api-keys.md); a person takes longer than that.
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1_100));
        runs.push(await runTourWithFetch(readTour(README), started.server.url, started.key));
      }
    }, 120_000);
    afterAll(async () => {
      await started?.server.close();
      rmSync(started?.folder, { recursive: true, force: true });
    });

    it('prints the key the tour starts from, and the URL it uses', () => {
      expect(started.printed.join('\n')).toContain('listening on http://127.0.0.1:');
      expect(started.printed.join('\n')).toContain(`Try: curl -H 'X-API-Key: ${started.key}'`);
      // The README's URL is npm start's default.
      expect(loadConfig({}).server).toMatchObject({ host: '127.0.0.1', port: 8080 });
    });

    for (const [index, name] of ['first run', 'second run'].entries()) {
      describe(name, () => {
        const run = () => runs[index]!;

        it('answers every command with 2xx', () => {
          for (const exchange of run().exchanges)
            expect(
              exchange.status,
              `${exchange.request.method} ${exchange.request.url}: ${exchange.body}`,
            ).toBe(200);
        });

        for (const step of STEPS) {
          it(`${step.name}: ${step.method} ${step.path.source}`, () => {
            const matching = run().exchanges.filter(
              (e) =>
                e.request.method === step.method &&
                step.path.test(e.request.url.slice('http://127.0.0.1:8080'.length)),
            );
            // Steps with the same method and path (the order and its retry) match their exchanges in turn.
            const twins = STEPS.filter((s) => s.method === step.method && s.path.source === step.path.source);
            expect(matching.length, `the tour has no ${step.name}`).toBe(twins.length);
            step.check(matching[twins.indexOf(step)]!, run());
          });
        }

        it('replays the feed with listen --print --once: the events after the oldest shown, oldest first', () => {
          const [listen] = run().listens;
          expect(run().listens).toHaveLength(1);
          expect(listen!.args).toEqual(
            expect.arrayContaining(['--url', 'http://127.0.0.1:8080', '--print', '--once', '--since']),
          );
          // The key from the environment, not the command line, where `ps` would show it.
          expect(listen!.args.join(' ')).not.toContain('pk_test_');
          const shown = JSON.parse(run().files.get(`${TOUR_FILES}/events.json`)!.toString('utf8')).events as {
            id: string;
          }[];
          expect(listen!.stdout.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(
            shown
              .slice(0, -1)
              .map((e) => e.id)
              .reverse(),
          );
          expect(listen!.stderr.join('\n')).toContain('Replaying 2 event(s)');
        });

        it('has no command that no step checks', () => {
          for (const exchange of run().exchanges) {
            const path = exchange.request.url.slice('http://127.0.0.1:8080'.length);
            expect(
              STEPS.some((s) => s.method === exchange.request.method && s.path.test(path)),
              `${exchange.request.method} ${path}`,
            ).toBe(true);
          }
          expect(run().vars.ORDER).toMatch(/^GW-/);
          expect(run().vars.TRACKING).toMatch(/^LS/);
          expect(run().vars.DOC).toMatch(/^[0-9a-f-]{36}$/);
        });
      });
    }

    it('places a new order in the second run, with keys of its own, and reaches its own notice', () => {
      const [first, second] = runs as [TourRun, TourRun];
      expect(second.vars.RUN).not.toBe(first.vars.RUN);
      for (const name of ['ORDER', 'TRACKING', 'DOC'])
        expect(second.vars[name], name).not.toBe(first.vars[name]);
      expect(
        second.files
          .get(`${TOUR_FILES}/lieferschein.pdf`)
          ?.equals(first.files.get(`${TOUR_FILES}/lieferschein.pdf`)!),
      ).toBe(false);
    });
  });

  const missing = missingTools();
  describe.skipIf(missing !== null)(
    `as printed, in bash with curl and jq, run twice with one key${missing ? ` (skipped: ${missing})` : ''}`,
    () => {
      let started: Started;

      beforeAll(async () => {
        started = await startGatewayAsNpmStartDoes();
      });
      afterAll(async () => {
        await started?.server.close();
        rmSync(started?.folder, { recursive: true, force: true });
      });

      it('runs every command without an error both times, and leaves the files the README names', async () => {
        const work = join(started.folder, 'work');
        const curlHome = join(started.folder, 'curl');
        execFileSync('mkdir', ['-p', work, curlHome]);
        // No `fail-with-body` here: the README's PDF step uses `--fail`, which curl refuses next to it.
        // The status of every request is checked below instead.
        writeFileSync(
          join(curlHome, '.curlrc'),
          'write-out = "%{stderr}TOUR %{http_code} %{method} %{url_effective}\\n"\n',
        );
        // The README's `npx tsx src/cli.ts` runs in a checkout: give the folder the checkout's code.
        for (const name of ['src', 'node_modules']) symlinkSync(join(ROOT, name), join(work, name));
        const script = tourScript(README, started.server.url, started.key);
        const results: { pdf: Buffer; order: string; replayed: boolean }[] = [];
        // The same folder both times, as when someone runs the tour again: a file the second run fails to
        // write would still hold the first run's contents, so the contents are compared too.
        for (const attempt of ['first run', 'second run']) {
          if (attempt === 'second run') await new Promise((resolve) => setTimeout(resolve, 1_100));
          const { code, stdout, stderr } = await bash(script, work, { CURL_HOME: curlHome });
          expect(code, `${attempt}: bash failed:\n${stderr}\n${stdout}`).toBe(0);
          const statuses = stderr.split('\n').filter((line) => line.startsWith('TOUR '));
          expect(statuses.length, `${attempt}:\n${stderr}`).toBe(STEPS.length);
          for (const line of statuses) expect(line, attempt).toMatch(/^TOUR 200 /);
          expect(stdout, attempt).toContain('"status":"ok"');
          expect(stdout, attempt).toContain('"status":"confirmed"');
          expect(stdout, attempt).toContain('"verdict":"accepted"');
          expect(stderr, attempt).toContain('Replaying 2 event(s)');
          const pdf = readFileSync(join(work, TOUR_FILES, 'lieferschein.pdf'));
          expect(pdf.subarray(0, 5).toString(), attempt).toBe('%PDF-');
          const order = JSON.parse(readFileSync(join(work, TOUR_FILES, 'order.json'), 'utf8'))
            .order_id as string;
          expect(order, attempt).toMatch(/^GW-/);
          results.push({ pdf, order, replayed: /^idempotent-replayed: true\r?$/im.test(stdout) });
        }
        // Nothing beside the checkout's own folders: the tour's files are in the ignored folder.
        // (`.npm` is npx's cache: HOME is this folder here.)
        expect(
          readdirSync(work)
            .filter((name) => name !== '.npm')
            .sort(),
        ).toEqual(['.scratch', 'node_modules', 'src']);
        const [first, second] = results as [(typeof results)[0], (typeof results)[0]];
        expect(first.replayed && second.replayed).toBe(true);
        expect(second.order).not.toBe(first.order);
        expect(second.pdf.equals(first.pdf)).toBe(false);
      }, 300_000);
    },
  );
});

/** Why the literal run cannot happen here, or null when bash, curl ≥ 7.76 and jq are installed. */
function missingTools(): string | null {
  try {
    execFileSync('bash', ['-c', 'true']);
    execFileSync('jq', ['--version'], { stdio: 'pipe' });
    const version = /curl (\d+)\.(\d+)/.exec(execFileSync('curl', ['--version'], { encoding: 'utf8' }));
    if (version === null) return 'curl version unknown';
    const [major, minor] = [Number(version[1]), Number(version[2])];
    if (major < 7 || (major === 7 && minor < 76)) return `curl ${major}.${minor} lacks --fail-with-body`;
    return null;
  } catch (error) {
    return `bash, curl or jq missing (${(error as Error).message.split('\n')[0]})`;
  }
}

function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
