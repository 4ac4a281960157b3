import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './ports.js';

/**
 * The battery's own redis-server on a free loopback port, nothing kept on disk, so it can be killed and
 * brought back without touching the machine's shared Redis on 6379.
 */

export interface OwnRedis {
  readonly port: number;
  readonly url: string;
  /** SIGKILL: connections die without a goodbye. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty). */
  start(): Promise<void>;
  /** Number of keys (`DBSIZE`); undefined when it does not answer. */
  keyCount(): Promise<number | undefined>;
  remove(): Promise<void>;
}

export function findRedisServer(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : undefined;
}

export async function startOwnRedis(binary: string): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port} in 10 s`);
      await sleep(50);
    }
  };
  const kill = async () => {
    const running = child;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    keyCount: async () => {
      const answer = await ask(port, 'DBSIZE');
      return answer?.startsWith(':') ? Number(answer.slice(1).trim()) : undefined;
    },
    remove: kill,
  };
}

/** Sends one inline command over a raw socket; its first answer chunk, or undefined within 500 ms. */
function ask(port: number, command: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (answer: string | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(500, () => done(undefined));
    socket.on('error', () => done(undefined));
    socket.on('data', (chunk) => done(chunk.toString()));
    socket.on('connect', () => socket.write(`${command}\r\n`));
  });
}

async function answersPing(port: number): Promise<boolean> {
  return (await ask(port, 'PING'))?.startsWith('+PONG') ?? false;
}
