import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestKey } from '../../test/app.js';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { registerProbeRoutes } from '../../test/probe-routes.js';
import type { GatewayApp } from '../http/types.js';
import { createLogger, isoTimeField, REDACT_PATHS, redactQuery, redactSecrets } from './logger.js';

const MAX_DEPTH_FOR_TEST = 4;

function captured(level: 'info' | 'debug' = 'info') {
  const lines: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => lines.push(line) } });
  return { logger, text: () => lines.join('') };
}

describe('redactQuery', () => {
  it('keeps URLs without secret-looking parameters as they are', () => {
    for (const url of ['/v1/health', '/v1/deliveries?wholesaler=phoenix&limit=5', undefined]) {
      expect(redactQuery(url)).toBe(url);
    }
  });

  it('redacts the values of secret-looking names, encoded names and repeated ones included', () => {
    expect(redactQuery('/x?Password=a&token=b&x=1&pass%77ord=c&secret')).toBe(
      '/x?Password=[REDACTED]&token=[REDACTED]&x=1&pass%77ord=[REDACTED]&secret',
    );
    expect(redactQuery('/x?wholesaler=phoenix&password=1&password=2')).toBe(
      '/x?wholesaler=phoenix&password=[REDACTED]&password=[REDACTED]',
    );
  });
});

describe('log redaction', () => {
  it('redacts secret keys at the top level and nested up to four objects deep', () => {
    const { logger, text } = captured();
    logger.info({
      password: 'top-secret-0',
      a: { credentials: { username: 'u', password: 'top-secret-1' } },
      b: { c: { d: { e: { password: 'top-secret-4' } } } },
      headers: {
        authorization: 'Basic top-secret-auth',
        'x-api-key': 'top-secret-key',
        'user-agent': 'curl',
      },
      signing_secret: 'whsec_top-secret',
    });
    expect(text()).not.toMatch(/top-secret/);
    expect(text()).toContain('"user-agent":"curl"');
    expect(text()).toContain('[REDACTED]');
  });

  it('never changes the logged objects, and covers arrays, errors and child-logger bindings', () => {
    const { logger, text } = captured();
    const input = { a: { password: 'top-secret-a' }, list: [{ secret: 'top-secret-list' }], keep: { x: 1 } };
    const error = Object.assign(new Error('upstream refused'), {
      credentials: { password: 'top-secret-err' },
    });
    logger
      .child({ credentials: 'top-secret-binding', request_id: 'r1' })
      .warn({ ...input, err: error }, 'odd');
    expect(text()).not.toMatch(/top-secret/);
    expect(text()).toContain('"message":"upstream refused"');
    expect(text()).toContain('"keep":{"x":1}');
    expect(input.a.password).toBe('top-secret-a');
    expect(input.list[0]!.secret).toBe('top-secret-list');
    expect(error.credentials.password).toBe('top-secret-err');
  });

  it('redacts exactly the REDACT_PATHS: four levels below the top, not five', () => {
    const nested = (depth: number): Record<string, unknown> =>
      depth === 0 ? { password: 'p', other: 'o' } : { n: nested(depth - 1) };
    for (let depth = 0; depth <= MAX_DEPTH_FOR_TEST; depth++) {
      expect(JSON.stringify(redactSecrets(nested(depth)))).toBe(
        JSON.stringify(nested(depth)).replace('"p"', '"[REDACTED]"'),
      );
    }
    const tooDeep = nested(MAX_DEPTH_FOR_TEST + 1);
    expect(redactSecrets(tooDeep)).toBe(tooDeep);
    const clean = { a: { b: [1, { c: 'd' }] } };
    expect(redactSecrets(clean)).toBe(clean); // nothing to hide: no copy
    expect(REDACT_PATHS).toContain('*.*.*.*.password');
    expect(REDACT_PATHS).not.toContain('*.*.*.*.*.password');
  });

  describe('through HTTP', () => {
    let database: TestDatabase;
    let app: GatewayApp;
    let key: string;
    const log = captured('debug');

    beforeAll(async () => {
      database = await createTestDatabase('sqlite');
      ({ app } = await buildTestApp(database, { logger: log.logger, extraRoutes: [registerProbeRoutes] }));
      key = (await createTestKey(database)).secret;
    });
    afterAll(async () => {
      await app.close();
      await database.dispose();
    });

    it('never writes the API key, MSV3 password or user name sent in headers', async () => {
      const headers = {
        'x-api-key': key,
        'x-msv3-username': 'kunde-0815',
        'x-msv3-password': 'hunter2-in-header',
        authorization: 'Basic aHVudGVyMg==',
      };
      for (const url of ['/test/log-secrets', '/v1/wholesalers', '/test/boom', '/v1/nothing']) {
        await app.inject({ url, headers });
      }
      await app.inject({ url: '/v1/wholesalers', headers: { ...headers, 'x-api-key': `${key}x` } });
      const output = log.text();
      expect(output).toContain('headers as received'); // the probe really logged the headers
      expect(output).toContain('nested credentials');
      for (const secret of [
        key,
        'kunde-0815',
        'hunter2-in-header',
        'aHVudGVyMg==',
        'kunde-4711',
        'hunter2-nested',
      ]) {
        expect(output).not.toContain(secret);
      }
    });

    it('logs requests without their headers', async () => {
      await app.inject({ url: '/v1/health', headers: { 'x-msv3-password': 'only-in-a-header' } });
      const completed = log
        .text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.msg === 'request completed')
        .at(-1);
      expect(Object.keys(completed.req).sort()).toEqual(['method', 'remote_address', 'route', 'url']);
    });

    it('logs the values of secret-looking query parameters as [REDACTED]', async () => {
      await app.inject({
        url: '/v1/health?password=Pw-in-a-query-1&api%5Fkey=pk_test_in_a_query&wholesaler=phoenix',
      });
      const output = log.text();
      expect(output).not.toContain('Pw-in-a-query-1');
      expect(output).not.toContain('pk_test_in_a_query');
      expect(output).toContain('/v1/health?password=[REDACTED]&api%5Fkey=[REDACTED]&wholesaler=phoenix');
    });
  });
});

describe('the time of a log line', () => {
  const asPinoWritesIt = (ms: number) => `,"time":"${new Date(ms).toISOString()}"`;
  const anyTime = fc.integer({ min: -8.64e15, max: 8.64e15 });

  it('is what pino isoTime writes, for any time a Date holds', () => {
    fc.assert(
      fc.property(anyTime, (ms) => {
        expect(isoTimeField(() => ms)()).toBe(asPinoWritesIt(ms));
      }),
      { numRuns: 5000 },
    );
  });

  it('stays right over a run of lines, within a second and across seconds', () => {
    const around = fc.integer({ min: 1_700_000_000_000, max: 1_700_000_010_000 });
    fc.assert(
      fc.property(fc.array(fc.oneof(around, anyTime), { minLength: 1, maxLength: 40 }), (times) => {
        let at = 0;
        const field = isoTimeField(() => times[at]!);
        for (at = 0; at < times.length; at++) expect(field()).toBe(asPinoWritesIt(times[at]!));
      }),
      { numRuns: 1000 },
    );
  });
});
