/**
 * `npm run bench:gateway -- --ledger`: starts the canned upstream and bench/gateway/ledger.ts in its
 * own process with the node flags of `npm start`, and writes what it measured to
 * bench/results/gateway-ledger.json.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, stopAll, track } from '../common/processes.js';
import { writeResults } from '../common/results.js';
import { forkChild, START_NODE_FLAGS } from './harness.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const RESULTS = join(process.cwd(), 'bench', 'results', 'gateway-ledger.json');

export async function measureLedger(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const folder = mkdtempSync(join(tmpdir(), 'msv3-bench-ledger-'));
  try {
    const upstream = await forkChild('upstream', ['0']);
    const child = track(
      fork(join(HERE, `ledger${EXT}`), [`http://127.0.0.1:${upstream.port}/msv3/v2.0`, folder], {
        execArgv: [...START_NODE_FLAGS],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    let ledger: unknown;
    child.on('message', (message: { ledger?: unknown }) => {
      ledger = message.ledger ?? ledger;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0 || ledger === undefined) throw new Error(`the ledger process exited with ${code}`);
    writeResults(RESULTS, ledger);
    console.log(`[bench] wrote ${RESULTS}`);
    upstream.child.send({ stop: true });
  } finally {
    stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}
