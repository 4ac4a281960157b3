import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, listSettings, loadConfig, misspeltVariables } from './config.js';

function configError(env: NodeJS.ProcessEnv, options?: { file?: string }): ConfigError {
  try {
    loadConfig(env, options);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  const folder = mkdtempSync(join(tmpdir(), 'msv3-config-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const writeFile = (name: string, content: unknown) => {
    const path = join(folder, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };

  it('uses the documented defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 8080,
      listenBacklog: 4096,
      bodyLimitBytes: 1_048_576,
      requestTimeoutMs: 30_000,
      shutdownTimeoutMs: 10_000,
      workers: 1,
    });
    expect(config.database.url).toBe('sqlite:./data/gateway.db');
    expect(config.redis.url).toBeUndefined();
    expect(config.log.level).toBe('info');
    expect(config.rateLimit).toEqual({
      store: 'auto',
      testPoints: 25,
      testWindowSeconds: 1,
      livePoints: 100,
      liveWindowSeconds: 1,
    });
    expect(config.network.allowPrivateEndpoints).toBe(false);
    expect(config.metrics.token).toBeUndefined();
  });

  it('reads and converts environment variables', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '9090',
      DATABASE_URL: 'postgresql://user@db:5432/gateway',
      REDIS_URL: 'redis://cache:6379',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
      UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
      LOG_LEVEL: 'debug',
    });
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 9090 });
    expect(config.database.url).toBe('postgresql://user@db:5432/gateway');
    expect(config.redis.url).toBe('redis://cache:6379');
    expect(config.network.allowPrivateEndpoints).toBe(true);
    expect(config.upstream.headersTimeoutMs).toBe(1500);
    expect(config.log.level).toBe('debug');
  });

  it('gives a whole wholesaler call 65 s unless UPSTREAM_TOTAL_TIMEOUT_MS says otherwise', () => {
    expect(loadConfig({}).upstream.totalTimeoutMs).toBe(65_000);
    const lowered = { UPSTREAM_CONNECT_TIMEOUT_MS: '200', UPSTREAM_HEADERS_TIMEOUT_MS: '800' };
    expect(loadConfig({ ...lowered, UPSTREAM_TOTAL_TIMEOUT_MS: '1000' }).upstream.totalTimeoutMs).toBe(1_000);
  });

  it('reads WORKERS as a number or auto, also from the file', () => {
    expect(loadConfig({ WORKERS: '4' }).server.workers).toBe(4);
    expect(loadConfig({ WORKERS: ' 0 ' }).server.workers).toBe(0);
    expect(loadConfig({ WORKERS: 'auto' }).server.workers).toBe('auto');
    const file = writeFile('workers.json', { server: { workers: 3 } });
    expect(loadConfig({}, { file }).server.workers).toBe(3);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', REDIS_URL: '' })).toMatchObject({ server: { port: 8080 }, redis: {} });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT', 'PORT must be integer (got "abc")'],
    [{ PORT: '70000' }, 'PORT', 'PORT must be <= 65535 (got 70000)'],
    [{ PORT: '80.5' }, 'PORT', 'PORT must be integer (got 80.5)'],
    [
      { LOG_LEVEL: 'loud' },
      'LOG_LEVEL',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    [{ ALLOW_PRIVATE_ENDPOINTS: 'maybe' }, 'ALLOW_PRIVATE_ENDPOINTS', 'must be boolean'],
    [
      { DATABASE_URL: 'mysql://db/x' },
      'DATABASE_URL',
      'DATABASE_URL must be sqlite:<file>, postgres://… or postgresql://…',
    ],
    [{ RATE_LIMIT_TEST_POINTS: '0' }, 'RATE_LIMIT_TEST_POINTS', 'RATE_LIMIT_TEST_POINTS must be >= 1'],
    [{ RATE_LIMIT_STORE: 'redis' }, 'RATE_LIMIT_STORE', 'RATE_LIMIT_STORE=redis needs REDIS_URL'],
    [{ RATE_LIMIT_STORE: 'database' }, 'RATE_LIMIT_STORE', 'needs a PostgreSQL DATABASE_URL'],
    [{ WORKERS: 'many' }, 'WORKERS', 'WORKERS must be a whole number from 0 to 256, or auto (got "many")'],
    [{ WORKERS: '257' }, 'WORKERS', 'WORKERS must be a whole number from 0 to 256, or auto (got 257)'],
    [{ WORKERS: '1.5' }, 'WORKERS', 'must be a whole number'],
    [
      { WORKERS: '2', DATABASE_URL: 'sqlite::memory:' },
      'WORKERS',
      'each worker would have its own sqlite::memory:',
    ],
    [{ BREAKER_COOLDOWN_MS: '-1' }, 'BREAKER_COOLDOWN_MS', 'BREAKER_COOLDOWN_MS must be >= 0'],
    [
      { WHOLESALER_PROBE_INTERVAL_MS: '50' },
      'WHOLESALER_PROBE_INTERVAL_MS',
      'must be 0 (off) or at least 1000',
    ],
    [
      { UPSTREAM_TOTAL_TIMEOUT_MS: '999' },
      'UPSTREAM_TOTAL_TIMEOUT_MS',
      'UPSTREAM_TOTAL_TIMEOUT_MS must be >= 1000',
    ],
    [
      { UPSTREAM_TOTAL_TIMEOUT_MS: '20000', UPSTREAM_HEADERS_TIMEOUT_MS: '16000' },
      'UPSTREAM_TOTAL_TIMEOUT_MS',
      'UPSTREAM_TOTAL_TIMEOUT_MS (20000) must be at least UPSTREAM_CONNECT_TIMEOUT_MS + UPSTREAM_HEADERS_TIMEOUT_MS (21000)',
    ],
  ])('rejects %j naming %s', (env, variable, message) => {
    const error = configError(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(message);
  });

  it('reads ALLOWED_PRIVATE_CIDRS as a comma-separated list of CIDR ranges', () => {
    expect(loadConfig({}).network.allowedPrivateCidrs).toBeUndefined();
    expect(
      loadConfig({ ALLOWED_PRIVATE_CIDRS: ' 10.20.0.0/16, 127.0.0.0/8 ,::1/128,' }).network
        .allowedPrivateCidrs,
    ).toEqual(['10.20.0.0/16', '127.0.0.0/8', '::1/128']);
    const file = writeFile('cidrs.json', { network: { allowedPrivateCidrs: ['192.168.7.0/24'] } });
    expect(loadConfig({}, { file }).network.allowedPrivateCidrs).toEqual(['192.168.7.0/24']);
  });

  it.each([
    ['10.20.0.0/16,intranet', '"intranet" is not a CIDR range: expected an IP address and a prefix length'],
    ['10.20.1.0/16', '"10.20.1.0/16" is not a CIDR range: the address has bits set beyond the /16 prefix'],
    ['::1/129', '"::1/129" is not a CIDR range: the prefix length must be 0 to 128'],
  ])('stops start-up on ALLOWED_PRIVATE_CIDRS=%s, naming the variable', (value, message) => {
    const error = configError({ ALLOWED_PRIVATE_CIDRS: value });
    expect(error.variable).toBe('ALLOWED_PRIVATE_CIDRS');
    expect(error.message).toContain(`ALLOWED_PRIVATE_CIDRS: ${message}`);
  });

  it('names ALLOWED_PRIVATE_CIDRS and the file for a list entry of the wrong type', () => {
    const file = writeFile('cidr-type.json', { network: { allowedPrivateCidrs: [10] } });
    const error = configError({}, { file });
    expect(error.variable).toBe('ALLOWED_PRIVATE_CIDRS');
    expect(error.message).toContain(
      `ALLOWED_PRIVATE_CIDRS (network.allowedPrivateCidrs in ${file}) must be string`,
    );
  });

  it('never echoes the value of a secret setting', () => {
    const error = configError({ METRICS_TOKEN: 'short-secret' });
    expect(error.variable).toBe('METRICS_TOKEN');
    expect(error.message).not.toContain('short-secret');
    expect(configError({ DATABASE_URL: 'mysql://root:pw-123@db' }).message).not.toContain('pw-123');
  });

  it('reads the standard OpenTelemetry variables; tracing is off without an endpoint', () => {
    expect(loadConfig({}).tracing).toEqual({
      timeoutMs: 10_000,
      sampler: 'parentbased_always_on',
      samplerArg: 1,
    });
    const config = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318/otlp',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant = pharmacies',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_SERVICE_NAME: 'gateway-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=production',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(config.tracing).toEqual({
      endpoint: 'https://collector.example:4318/otlp',
      headers: 'authorization=Bearer%20abc, x-tenant = pharmacies',
      timeoutMs: 2500,
      serviceName: 'gateway-eu',
      resourceAttributes: 'deployment.environment.name=production',
      sampler: 'parentbased_traceidratio',
      samplerArg: 0.25,
    });
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'must be an http(s) URL',
    ],
    [{ OTEL_EXPORTER_OTLP_HEADERS: 'Bearer abc' }, 'OTEL_EXPORTER_OTLP_HEADERS', 'name=value pairs'],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'production' }, 'OTEL_RESOURCE_ATTRIBUTES', 'key=value pairs'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER', 'must be one of always_on'],
    [{ OTEL_TRACES_SAMPLER_ARG: '2' }, 'OTEL_TRACES_SAMPLER_ARG', 'must be <= 1'],
  ])('rejects the tracing setting %j naming %s', (env, variable, message) => {
    const error = configError(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(message);
  });

  it('never echoes collector credentials from the endpoint or the headers', () => {
    const endpoint = configError({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:pw-777@collector:4318' });
    expect(endpoint.message).not.toContain('pw-777');
    const headers = configError({ OTEL_EXPORTER_OTLP_HEADERS: 'token-888' });
    expect(headers.message).not.toContain('token-888');
  });

  it('reads a JSON file shaped like the configuration, and lets the environment win', () => {
    const file = writeFile('ok.json', {
      server: { port: 7000, host: '0.0.0.0' },
      rateLimit: { livePoints: 7 },
    });
    const config = loadConfig({ PORT: '7001' }, { file });
    expect(config.server).toMatchObject({ port: 7001, host: '0.0.0.0' });
    expect(config.rateLimit.livePoints).toBe(7);
  });

  it('finds the file through CONFIG_FILE', () => {
    const file = writeFile('via-env.json', { log: { level: 'warn' } });
    expect(loadConfig({ CONFIG_FILE: file }).log.level).toBe('warn');
  });

  it('names the variable and the file for a bad value in the file', () => {
    const file = writeFile('bad.json', { server: { port: 'eighty' } });
    const error = configError({}, { file });
    expect(error.variable).toBe('PORT');
    expect(error.message).toContain(`PORT (server.port in ${file}) must be integer`);
  });

  it('rejects unknown settings, unknown sections and unreadable files as CONFIG_FILE errors', () => {
    expect(configError({}, { file: writeFile('typo.json', { server: { prot: 1 } }) }).message).toContain(
      'unknown setting "server.prot"',
    );
    expect(configError({}, { file: writeFile('section.json', { nope: {} }) }).variable).toBe('CONFIG_FILE');
    expect(configError({}, { file: writeFile('broken.json', '{ not json') }).variable).toBe('CONFIG_FILE');
    expect(configError({}, { file: join(folder, 'missing.json') }).variable).toBe('CONFIG_FILE');
  });

  it('returns a frozen configuration', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
  });

  it('gives every setting a distinct environment variable and a description', () => {
    const settings = listSettings();
    expect(new Set(settings.map((s) => s.env)).size).toBe(settings.length);
    for (const setting of settings) {
      expect(setting.env).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(setting.schema.description?.length).toBeGreaterThan(10);
    }
  });
});

describe('variables that look like misspelt settings', () => {
  const env = { DATABSE_URL: 'postgres://gateway@db/gateway', PATH: '/usr/bin', HOSTNAME: 'gw-1' };

  it('are listed with the setting meant, and otherwise ignored', () => {
    expect(misspeltVariables(env)).toEqual([{ typed: 'DATABSE_URL', meant: 'DATABASE_URL' }]);
    expect(loadConfig(env).database.url).toBe('sqlite:./data/gateway.db');
    expect(misspeltVariables({ CONFIG_FILE: '/etc/gw.json', MSV3_GATEWAY_WORKER: '1' })).toEqual([]);
  });

  it('stop the configuration with STRICT_CONFIG=true, naming the setting meant', () => {
    const error = configError({ ...env, STRICT_CONFIG: 'true' });
    expect(error.variable).toBe('DATABSE_URL');
    expect(error.message).toBe(
      'DATABSE_URL is not a setting (did you mean DATABASE_URL?): rename or remove it (STRICT_CONFIG refuses variables that look like misspelt settings)',
    );
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:', STRICT_CONFIG: 'true' }).startup.strictConfig).toBe(
      true,
    );
  });
});

describe('probes on a port of their own', () => {
  it('takes HEALTH_PORT beside PORT, in one process only', () => {
    expect(loadConfig({ HEALTH_PORT: '8081' }).server.healthPort).toBe(8081);
    expect(loadConfig({}).server.healthPort).toBeUndefined();
    expect(configError({ HEALTH_PORT: '8081', WORKERS: '2', DATABASE_URL: 'sqlite:./x.db' }).message).toBe(
      'HEALTH_PORT needs WORKERS=1 (worker processes cannot share it); with several workers the probes are on PORT',
    );
    expect(configError({ HEALTH_PORT: '8080' }).message).toBe(
      'HEALTH_PORT must differ from PORT (both 8080)',
    );
    expect(loadConfig({ PORT: '0', HEALTH_PORT: '0' }).server.healthPort).toBe(0);
  });
});
