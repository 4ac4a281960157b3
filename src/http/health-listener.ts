import { Worker } from 'node:worker_threads';
import type { Readiness } from './readiness.js';

/** What the health listener's thread is started with. */
export interface HealthListenerData {
  host: string;
  port: number;
  backlog: number;
  timing: HealthListenerTiming;
}

export interface HealthListenerTiming {
  /** How often the listener asks the gateway's thread for readiness. */
  checkEveryMs: number;
  /** Readiness not confirmed for this long counts as not ready (the check itself may take 2 s). */
  readinessStaleMs: number;
  /** Liveness fails once the gateway's thread has not answered for this long: its loop is stuck. */
  livenessStaleMs: number;
}

const TIMING: HealthListenerTiming = {
  checkEveryMs: 1_000,
  readinessStaleMs: 5_000,
  livenessStaleMs: 10_000,
};

/** The gateway's thread to the listener's: readiness as last checked, or the start of the drain. */
export type ToListener = ({ type: 'readiness' } & Readiness) | { type: 'draining' };

/** The listener's thread to the gateway's. */
export type FromListener =
  | { type: 'check' }
  | { type: 'listening'; port: number }
  | { type: 'failed'; code?: string | undefined; message: string };

export interface HealthListener {
  /** `http://host:port` of HEALTH_PORT. */
  url: string;
  /** Readiness fails from now on (SIGTERM: the drain begins). */
  draining(): void;
  close(): Promise<void>;
}

/**
 * HEALTH_PORT (docs/operating.md "Health probes on a port of their own"): `GET /v1/health` and
 * `GET /v1/health/ready` answered by a thread of their own (`health-listener-thread.ts`), with its own
 * listen backlog and event loop, so that orchestrators' probes are answered within milliseconds while
 * the gateway's loop is busy with a burst of connections. Readiness is this thread's `checkReadiness`,
 * asked for by the listener every second; the listener answers from the last result.
 */
export async function startHealthListener(options: {
  host: string;
  port: number;
  backlog: number;
  checkReadiness: () => Promise<Readiness>;
  /** Tests shorten it. */
  timing?: HealthListenerTiming;
}): Promise<HealthListener> {
  const { host, port, backlog } = options;
  const workerData: HealthListenerData = { host, port, backlog, timing: options.timing ?? TIMING };
  const thread = import.meta.url.endsWith('.ts')
    ? // From the sources (tests, `npm run dev`): the thread is TypeScript too, loaded through tsx, whose
      // hooks a worker thread does not inherit.
      new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})` +
          `.then(({ register }) => { register(); return import(${JSON.stringify(new URL('./health-listener-thread.ts', import.meta.url).href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(new URL('./health-listener-thread.js', import.meta.url), { workerData });
  let checking = false;
  thread.on('message', (message: FromListener) => {
    if (message.type !== 'check' || checking) return;
    checking = true;
    options
      .checkReadiness()
      .then((readiness) => thread.postMessage({ type: 'readiness', ...readiness } satisfies ToListener))
      .catch(() => {})
      .finally(() => {
        checking = false;
      });
  });
  const listening = await new Promise<number>((resolve, reject) => {
    const onMessage = (message: FromListener) => {
      if (message.type === 'listening') resolve(message.port);
      if (message.type === 'failed')
        reject(Object.assign(new Error(message.message), { code: message.code }));
    };
    thread.on('message', onMessage);
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the health listener's thread exited (${code})`)));
  }).catch(async (error: unknown) => {
    await thread.terminate();
    throw error;
  });
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${listening}`,
    draining: () => thread.postMessage({ type: 'draining' } satisfies ToListener),
    close: async () => {
      await thread.terminate();
    },
  };
}
