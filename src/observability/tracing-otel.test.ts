import { describe, expect, it } from 'vitest';
import { parseKeyValueList, tracesUrl } from './tracing-otel.js';

describe('OpenTelemetry settings', () => {
  it('reads key=value lists with trimmed keys and percent-decoded values', () => {
    expect(parseKeyValueList('authorization=Bearer%20abc%3D%3D, x-tenant = pharmacies,=orphan,flag')).toEqual(
      {
        authorization: 'Bearer abc==',
        'x-tenant': 'pharmacies',
      },
    );
    expect(parseKeyValueList('note=100%')).toEqual({ note: '100%' });
    expect(parseKeyValueList(undefined)).toEqual({});
  });

  it('appends v1/traces to the base endpoint, keeping its path', () => {
    expect(tracesUrl('http://127.0.0.1:4318')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(tracesUrl('https://collector.example/otlp/')).toBe('https://collector.example/otlp/v1/traces');
  });
});
