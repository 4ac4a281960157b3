import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const LOCK = new URL('../../../node_modules/.cache/msv3-client-pack.lock', import.meta.url).pathname;
/** A lock older than this belongs to a test process that died: taken over. */
const STALE_MS = 5 * 60_000;

/**
 * Runs `work` while no other test packs the client: `npm pack` rebuilds packages/client/dist (prepack),
 * and two test files run at once, so two packs would remove each other's build mid-way. The lock is a
 * folder (mkdir is atomic); waiting polls it until it is free.
 */
export async function whilePackingClient<T>(work: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      else await sleep(100);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
