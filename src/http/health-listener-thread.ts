import { createServer, type ServerResponse } from 'node:http';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ApiError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { newRequestId } from '../lib/ids.js';
import type { FromListener, HealthListenerData, ToListener } from './health-listener.js';

/**
 * The health listener's thread (docs/operating.md "Health probes on a port of their own"): a plain
 * node:http server on HEALTH_PORT, with an event loop of its own, so that a probe is answered at once
 * however busy the gateway's own loop is (a burst of thousands of connections fills PORT's backlog and
 * its loop alike). It asks the gateway's thread for readiness every second and answers from the last
 * answer; liveness holds while that thread answers at all.
 */

const RETRY_AFTER_S = 5;

const data = workerData as HealthListenerData;

// Where the process may (root, CAP_SYS_NICE), this thread runs at a higher priority than the
// gateway's own: on a machine whose cores are all busy, a probe then waits for none of them. Linux
// keeps priorities per thread, and 0 names the calling one. Elsewhere it keeps the process's.
try {
  setPriority(0, constants.priority.PRIORITY_ABOVE_NORMAL);
} catch {}
const { checkEveryMs, readinessStaleMs, livenessStaleMs } = data.timing;
const port = parentPort!;
const send = (message: FromListener) => port.postMessage(message);

let answeredAt = performance.now();
let confirmedAt = answeredAt;
let problems: string[] = ['the gateway has not checked its readiness yet'];
let webhookWorker: 'running' | 'disabled' = 'running';
let draining = false;

port.on('message', (message: ToListener) => {
  if (message.type === 'draining') {
    draining = true;
    return;
  }
  answeredAt = performance.now();
  confirmedAt = answeredAt;
  problems = message.problems;
  webhookWorker = message.webhookWorker;
});
// Unref'd: the thread ends when the gateway closes its port, not on this timer.
setInterval(() => send({ type: 'check' }), checkEveryMs).unref();
send({ type: 'check' });

function answer(response: ServerResponse, status: number, body: unknown, requestId: string): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-request-id': requestId,
    ...(status === 503 ? { 'retry-after': String(RETRY_AFTER_S) } : {}),
  });
  response.end(response.req.method === 'HEAD' ? undefined : text);
}

function refuse(response: ServerResponse, error: ApiError, requestId: string): void {
  answer(response, error.status, error.toBody(requestId), requestId);
}

const server = createServer((request, response) => {
  const requestId = newRequestId();
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/v1/health' && path !== '/v1/health/ready') {
    refuse(
      response,
      new ApiError('route_not_found', `No such path here: ${path} (health probes only).`),
      requestId,
    );
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    refuse(response, new ApiError('method_not_allowed', `${path} answers GET and HEAD only.`), requestId);
    return;
  }
  const silentMs = performance.now() - answeredAt;
  if (path === '/v1/health') {
    if (silentMs <= livenessStaleMs) answer(response, 200, { status: 'ok', version: VERSION }, requestId);
    else {
      const seconds = Math.round(silentMs / 1000);
      refuse(
        response,
        new ApiError('service_unavailable', `The gateway has not answered for ${seconds} s.`),
        requestId,
      );
    }
    return;
  }
  const missing = draining
    ? ['the gateway is shutting down']
    : performance.now() - confirmedAt > readinessStaleMs
      ? [`no readiness check finished for ${Math.round((performance.now() - confirmedAt) / 1000)} s`]
      : problems;
  if (missing.length > 0) {
    refuse(response, new ApiError('service_unavailable', `Not ready: ${missing.join('; ')}.`), requestId);
    return;
  }
  answer(
    response,
    200,
    {
      status: 'ready',
      version: VERSION,
      checks: { database: 'ok', migrations: 'ok', webhook_worker: webhookWorker },
    },
    requestId,
  );
});

server.on('error', (error: NodeJS.ErrnoException) =>
  send({ type: 'failed', code: error.code, message: error.message }),
);
server.listen({ host: data.host, port: data.port, backlog: data.backlog }, () => {
  const address = server.address();
  send({
    type: 'listening',
    port: typeof address === 'object' && address !== null ? address.port : data.port,
  });
});
