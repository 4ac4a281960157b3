import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { watchHealth } from './http.js';

/**
 * GET /v1/health polled from a child process of its own, so that what the battery itself does meanwhile
 * (building a 15 MB answer, streaming 200 MB) does not delay the polls it times. `watch(url)` starts
 * polling every 50 ms; `stop()` gives the slowest answer.
 */

interface HealthFigures {
  maxMs: number;
  polls: number;
  failures: number;
}

export interface HealthPoller {
  watch(url: string): { stop(): Promise<HealthFigures> };
  close(): void;
}

type Message = { cmd: 'start'; url: string } | { cmd: 'stop' };

export function startHealthPoller(): HealthPoller {
  const child = fork(fileURLToPath(import.meta.url), ['child'], {
    execArgv: ['--import', 'tsx'],
    stdio: 'ignore',
  });
  return {
    watch(url) {
      child.send({ cmd: 'start', url } satisfies Message);
      return {
        stop: () =>
          new Promise<HealthFigures>((resolve) => {
            child.once('message', (figures) => resolve(figures as HealthFigures));
            child.send({ cmd: 'stop' } satisfies Message);
          }),
      };
    },
    close: () => child.kill(),
  };
}

if (process.argv[2] === 'child' && process.send !== undefined) {
  let watching: ReturnType<typeof watchHealth> | undefined;
  process.on('message', async (message: Message) => {
    if (message.cmd === 'start') watching = watchHealth(message.url);
    else {
      const figures = (await watching?.stop()) ?? { maxMs: 0, polls: 0, failures: 0 };
      watching = undefined;
      process.send?.(figures);
    }
  });
  process.on('disconnect', () => process.exit(0));
}
