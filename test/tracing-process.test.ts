import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.js';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js';
import { until } from './until.js';

/**
 * Tracing as configured in a real `serve` process (docs/tracing.md): the standard OTEL_* variables reach
 * the SDK, the last spans are sent on SIGTERM, and without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry
 * SDK module is even loaded (a preloaded probe lists the modules the process loaded) and nothing is sent,
 * even with variables set that an SDK left to read the environment itself would follow.
 */

const PROBE = fileURLToPath(new URL('./loaded-modules-probe.cjs', import.meta.url));
const START_TIMEOUT_MS = 90_000;
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${CALLER_TRACE}-b7ad6b7169203331-01`;
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
/** Modules of the SDK and the exporter (the tiny API package alone records nothing). */
const SDK_MODULE = /[\\/]node_modules[\\/]@opentelemetry[\\/](?!api[\\/])/;

interface Run {
  status: number;
  traceResponse: string | null;
  exitCode: number | null;
  loadedModules: string[];
}

describe('tracing in a gateway process', () => {
  let folder: string;
  let receiver: OtlpReceiver;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'msv3-gateway-tracing-'));
    receiver = await startOtlpReceiver();
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await receiver?.close();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  /** Starts `serve` (its first start prints a test key), asks for availability, then stops it with SIGTERM. */
  async function availabilityThenStop(name: string, tracingEnv: NodeJS.ProcessEnv): Promise<Run> {
    const modulesFile = join(folder, `${name}-modules.json`);
    const gateway = await startGatewayProcess(
      {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        DATABASE_URL: `sqlite:${join(folder, `${name}.db`)}`,
        NODE_OPTIONS: `--require ${PROBE}`,
        LOADED_MODULES_FILE: modulesFile,
        ...tracingEnv,
      },
      children,
      START_TIMEOUT_MS,
    );
    const response = await fetch(`${gateway.url}/v1/availability`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': await firstKey(gateway),
        'x-msv3-username': 'apotheke1',
        'x-msv3-password': 'sandbox-secret',
        traceparent: TRACEPARENT,
      },
      body: JSON.stringify({ wholesaler: 'phoenix', items: [{ pzn: '04114918', quantity: 3 }] }),
    });
    await response.arrayBuffer();
    const exitCode = await stop(gateway.child);
    return {
      status: response.status,
      traceResponse: response.headers.get('traceresponse'),
      exitCode,
      loadedModules: JSON.parse(readFileSync(modulesFile, 'utf8')) as string[],
    };
  }

  it('exports to OTEL_EXPORTER_OTLP_ENDPOINT with its headers and resource, the last spans on SIGTERM', async () => {
    const run = await availabilityThenStop('traced', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token,x-tenant=pharmacies',
      OTEL_SERVICE_NAME: 'gateway-process-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,service.name=overridden',
    });
    expect(run.status).toBe(200);
    expect(run.traceResponse).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    expect(run.exitCode).toBe(0);
    // Exported within the shutdown (the batch delay is 5 s): nothing is left to wait for here.
    expect(receiver.exports.length).toBeGreaterThan(0);
    for (const received of receiver.exports) {
      expect(received.path).toBe('/v1/traces');
      expect(received.headers).toMatchObject({
        authorization: 'Bearer collector-token',
        'x-tenant': 'pharmacies',
        'content-type': 'application/json',
      });
    }
    const spans = receiver.spans().filter((span) => span.traceId === CALLER_TRACE);
    const server = spans.find((span) => span.name === 'POST /v1/availability');
    expect(server?.resource).toMatchObject({
      'service.name': 'gateway-process-under-test',
      'service.version': VERSION,
      'deployment.environment.name': 'test',
    });
    expect(spans.find((span) => span.parentSpanId === server?.spanId)?.name).toBe(
      'msv3 verfuegbarkeitAnfragen',
    );
    // The probe sees the SDK when it is loaded (so its silence below means something).
    expect(run.loadedModules.filter((path) => SDK_MODULE.test(path)).length).toBeGreaterThan(0);
  }, 240_000);

  it('loads no OpenTelemetry SDK and exports nothing without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const quiet = await startOtlpReceiver();
    try {
      const run = await availabilityThenStop('untraced', {
        // Followed by an SDK that reads the environment itself; the gateway reads only the endpoint.
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${quiet.url}/v1/traces`,
        OTEL_SERVICE_NAME: 'gateway-without-tracing',
      });
      expect(run.status).toBe(200);
      expect(run.traceResponse).toBeNull();
      expect(run.exitCode).toBe(0);
      expect(run.loadedModules.filter((path) => SDK_MODULE.test(path))).toEqual([]);
      expect(quiet.exports).toEqual([]);
    } finally {
      await quiet.close();
    }
  }, 240_000);
});

/** The `pk_test_` key a first start prints on stdout, just after it announced its URL on stderr. */
function firstKey(gateway: GatewayProcess): Promise<string> {
  return until(
    'the first key printed',
    () => /\bpk_test_[0-9A-Za-z]+/.exec(gateway.logs())?.[0],
    15_000,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}:\n${gateway.logs()}`);
  });
}

/** SIGTERM, then its exit code (the gateway stops within its shutdown limit, 10 s by default). */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the gateway did not exit within 30 s of SIGTERM')),
      30_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}
