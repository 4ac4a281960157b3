import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { misspeltNames } from './misspelt-names.js';

const KNOWN = [
  'HOST',
  'PORT',
  'WORKERS',
  'DATABASE_URL',
  'REDIS_URL',
  'LOG_LEVEL',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_RETENTION_DAYS',
  'UPSTREAM_MAX_CONCURRENCY',
  'OTEL_EXPORTER_OTLP_HEADERS',
];

describe('variables that look like misspelt settings', () => {
  it('names the setting meant for a slip of the keyboard, a swap, a wrong case or a missing unit', () => {
    expect(
      misspeltNames(
        [
          'DATABSE_URL',
          'DATABASE_URI',
          'database_url',
          'REDIS_ULR',
          'PROT',
          'LOGLEVEL',
          'UPSTREAM_MAX_CONCURENCY',
          'OTEL_EXPORTER_OTLP_HEADER',
          'WEBHOOK_TIMEOUT',
          'WEBHOOK_RETENTION',
        ],
        KNOWN,
      ),
    ).toEqual([
      { typed: 'DATABSE_URL', meant: 'DATABASE_URL' },
      { typed: 'DATABASE_URI', meant: 'DATABASE_URL' },
      { typed: 'database_url', meant: 'DATABASE_URL' },
      { typed: 'REDIS_ULR', meant: 'REDIS_URL' },
      { typed: 'PROT', meant: 'PORT' },
      { typed: 'LOGLEVEL', meant: 'LOG_LEVEL' },
      { typed: 'UPSTREAM_MAX_CONCURENCY', meant: 'UPSTREAM_MAX_CONCURRENCY' },
      { typed: 'OTEL_EXPORTER_OTLP_HEADER', meant: 'OTEL_EXPORTER_OTLP_HEADERS' },
      { typed: 'WEBHOOK_TIMEOUT', meant: 'WEBHOOK_TIMEOUT_MS' },
      { typed: 'WEBHOOK_RETENTION', meant: 'WEBHOOK_RETENTION_DAYS' },
    ]);
  });

  it("leaves a host's and a platform's own variables alone, and a name two settings are equally close to", () => {
    const environment = [
      'PATH',
      'HOME',
      'HOSTNAME',
      'HOSTTYPE',
      'PWD',
      'TERM',
      'LANG',
      'NODE_ENV',
      'NODE_OPTIONS',
      'REDIS_PORT',
      'REDIS_SERVICE_HOST',
      'MSV3_GATEWAY_PORT',
      'KUBERNETES_SERVICE_HOST',
      'POSTGRES_PASSWORD',
      'TEST_DATABASE_URL',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      'POST',
    ];
    expect(misspeltNames(environment, KNOWN)).toEqual([]);
  });

  it('never flags a known name, and only ever suggests known ones', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...KNOWN), fc.stringMatching(/^[A-Za-z_]{1,30}$/))),
        (names) => {
          for (const { typed, meant } of misspeltNames(names, KNOWN)) {
            expect(KNOWN).not.toContain(typed);
            expect(KNOWN).toContain(meant);
          }
        },
      ),
    );
  });
});
