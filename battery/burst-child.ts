import { fork } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * The two sides of the connection-burst check (`connection-burst.ts`), each in a child process of its
 * own, so that neither the 2,000 sockets of the burst nor the battery's own work delays the probes it
 * times: `burst` opens many client connections within a short time, each sending one request and
 * keeping its connection; `probe` opens a new connection for every health probe, as an orchestrator does,
 * and times it from `connect()` to the last byte of the answer.
 */

export interface ProbeResult {
  /** Which target: its label. */
  target: string;
  /** When the probe started (epoch ms, shared by both children). */
  at: number;
  ms: number;
  /** HTTP status, or `timeout` / a socket error code. */
  outcome: string;
}

export interface BurstResult {
  /** When the first connection was opened and the last answer arrived (epoch ms). */
  startedAt: number;
  endedAt: number;
  statuses: Record<string, number>;
  times: number[];
}

interface ProbeTarget {
  label: string;
  /** The URL to probe, path included. */
  url: string;
}

type Message =
  | { cmd: 'probe'; targets: ProbeTarget[]; everyMs: number }
  | { cmd: 'stop' }
  | { cmd: 'burst'; url: string; clients: number; overMs: number; request: string }
  | { cmd: 'close' };

export interface BurstChild {
  send(message: Message): void;
  next<T>(): Promise<T>;
  close(): void;
}

export function startBurstChild(): BurstChild {
  const child = fork(fileURLToPath(import.meta.url), ['child'], {
    execArgv: ['--import', 'tsx'],
    stdio: 'ignore',
  });
  return {
    send: (message) => child.send(message),
    next: <T>() => new Promise<T>((resolve) => child.once('message', (value) => resolve(value as T))),
    close: () => child.kill(),
  };
}

/** Epoch milliseconds with sub-millisecond precision, comparable between the two children. */
const wall = () => performance.timeOrigin + performance.now();

/** One request on a new connection with `Connection: close`, timed until the connection ends. */
function probe(target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  const { hostname: host, port, pathname: path } = new URL(target.url);
  const at = wall();
  return new Promise((resolve) => {
    const socket = connect(Number(port), host);
    let text = '';
    let done = false;
    const finish = (outcome: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ target: target.label, at, ms: wall() - at, outcome });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.setNoDelay(true);
    socket.on('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n`),
    );
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('end', () => finish(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 'no status'));
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? 'error'));
  });
}

/** A client that sends one request and keeps its connection; resolves with the status once answered. */
function client(
  host: string,
  port: number,
  request: string,
  sockets: Socket[],
): Promise<{ outcome: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(port, host);
    sockets.push(socket);
    let text = '';
    let done = false;
    const finish = (outcome: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ outcome, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish('timeout'), 30_000);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const headerEnd = text.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headerEnd))?.[1] ?? 0);
      if (text.length - headerEnd - 4 >= length) finish(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? '?');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? 'error'));
    socket.on('close', () => finish('closed'));
  });
}

if (process.argv[2] === 'child' && process.send !== undefined) {
  const reply = (value: unknown) => process.send?.(value);
  let probing: { stop: () => Promise<ProbeResult[]> } | undefined;
  const sockets: Socket[] = [];
  process.on('message', async (message: Message) => {
    switch (message.cmd) {
      case 'probe': {
        const running: Promise<ProbeResult>[] = [];
        let turn = 0;
        // A new probe every `everyMs`, whether or not the last one was answered, the targets in turn.
        const timer = setInterval(() => {
          running.push(probe(message.targets[turn++ % message.targets.length]!, 10_000));
        }, message.everyMs);
        probing = {
          stop: async () => {
            clearInterval(timer);
            return Promise.all(running);
          },
        };
        reply('probing');
        return;
      }
      case 'stop':
        reply((await probing?.stop()) ?? []);
        probing = undefined;
        return;
      case 'burst': {
        const { hostname, port } = new URL(message.url);
        const startedAt = wall();
        const answers: Promise<{ outcome: string; ms: number }>[] = [];
        // `clients` connections spread evenly over `overMs`, in steps of 10 ms.
        const steps = Math.max(1, Math.round(message.overMs / 10));
        for (let step = 0; step < steps; step++) {
          const due = Math.round(((step + 1) * message.clients) / steps) - answers.length;
          for (let i = 0; i < due; i++)
            answers.push(client(hostname, Number(port), message.request, sockets));
          const wait = startedAt + (step + 1) * 10 - wall();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        }
        const outcomes = await Promise.all(answers);
        const statuses: Record<string, number> = {};
        for (const { outcome } of outcomes) statuses[outcome] = (statuses[outcome] ?? 0) + 1;
        reply({
          startedAt,
          endedAt: wall(),
          statuses,
          times: outcomes.map((o) => o.ms),
        } satisfies BurstResult);
        return;
      }
      case 'close':
        for (const socket of sockets.splice(0)) socket.destroy();
        reply('closed');
        return;
    }
  });
  process.on('disconnect', () => process.exit(0));
}
