import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/core/errors.js';
import { errorShapeProblem, leakProblem, retryAfterProblem, undocumented5xxProblem } from './error-shape.js';
import { finalStatus, rawBody } from './fuzz-raw.js';
import { formatTable, row } from './report.js';

const body = (error: ApiError) => JSON.stringify(error.toBody('req_abc'));

describe('the battery error-shape checker', () => {
  it('accepts every body the gateway error type produces', () => {
    const error = new ApiError('invalid_request', 'items[0].pzn must match', { param: 'items[0].pzn' });
    expect(errorShapeProblem(400, body(error))).toBeUndefined();
    const upstream = new ApiError('wholesaler_fault', 'fault', {
      wholesaler: 'phoenix',
      upstream: {
        kind: 'ServerFault',
        error_code: 'S1',
        user_text: 'u',
        technical_text: 't',
        http_status: 500,
      },
    });
    expect(errorShapeProblem(502, body(upstream))).toBeUndefined();
  });

  it('names what is wrong with a body outside the shape', () => {
    const good = JSON.parse(body(new ApiError('conflict', 'taken')));
    expect(errorShapeProblem(409, 'Internal Server Error')).toMatch(/^not JSON/);
    expect(errorShapeProblem(409, '[]')).toBe('not a JSON object');
    expect(errorShapeProblem(409, JSON.stringify({ ...good, stack: 'x' }))).toBe('unexpected stack');
    expect(errorShapeProblem(409, JSON.stringify({ ...good, request_id: undefined }))).toBe(
      'missing request_id',
    );
    expect(errorShapeProblem(409, JSON.stringify({ ...good, error: 'oops' }))).toMatch(
      /not in the catalogue/,
    );
    expect(errorShapeProblem(409, JSON.stringify({ ...good, error_code: '1000' }))).toBe(
      'error_code 1000 is not 1305',
    );
    expect(errorShapeProblem(400, JSON.stringify(good))).toBe('status 400 for conflict (catalogue: 409)');
    expect(errorShapeProblem(409, JSON.stringify({ ...good, upstream: { secret: 1 } }))).toBe(
      'unexpected upstream.secret',
    );
    // Fastify's own error body, as an unhandled error would look.
    const fastify = JSON.stringify({ statusCode: 400, error: 'Bad Request', message: 'x' });
    expect(errorShapeProblem(400, fastify)).toBe('missing wholesaler, error_code, request_id');
  });

  it('counts internal_error and wholesaler kinds on routes without a wholesaler as undocumented 5xx', () => {
    expect(undocumented5xxProblem(500, body(new ApiError('internal_error', 'x')), true)).toBe(
      '500 internal_error',
    );
    const timeout = body(new ApiError('wholesaler_timeout', 'late', { wholesaler: 'phoenix' }));
    expect(undocumented5xxProblem(504, timeout, true)).toBeUndefined();
    expect(undocumented5xxProblem(504, timeout, false)).toBe(
      'wholesaler_timeout on a route that calls no wholesaler',
    );
    expect(
      undocumented5xxProblem(503, body(new ApiError('service_unavailable', 'db')), false),
    ).toBeUndefined();
    expect(undocumented5xxProblem(502, '<html>Bad Gateway</html>', true)).toMatch(
      /^502 outside the error shape/,
    );
    expect(undocumented5xxProblem(404, 'anything', false)).toBeUndefined();
  });

  it('wants Retry-After in whole seconds on 429 and 503 only', () => {
    expect(retryAfterProblem(503, undefined)).toBe('503 without Retry-After');
    expect(retryAfterProblem(429, 'soon')).toBe('429 with Retry-After "soon"');
    expect(retryAfterProblem(429, '1')).toBeUndefined();
    expect(retryAfterProblem(502, undefined)).toBeUndefined();
  });

  it('finds secrets and internals in answers', () => {
    expect(leakProblem('{"message":"bad pw-123"}', ['pw-123'])).toBe('contains a secret sent in the request');
    expect(leakProblem('at handler (/work/app/src/http/routes/orders.ts:10:5)', [])).toMatch(
      /^shows internals/,
    );
    expect(leakProblem('duplicate key value violates unique constraint "orders_pkey"', [])).toMatch(
      /^shows internals/,
    );
    expect(
      leakProblem('{"message":"The wholesaler phoenix did not answer in time"}', ['pw-123']),
    ).toBeUndefined();
    expect(leakProblem('a stack frame at x (/src/a.ts:1:1) in a log', ['pw'], false)).toBeUndefined();
  });
});

describe('the battery raw-socket reader', () => {
  it('takes the first final status after 100 Continue and the body by Content-Length', () => {
    const text =
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}trailing';
    expect(finalStatus(text)).toBe(408);
    expect(rawBody(text)).toBe('{"a":1}');
    expect(finalStatus('HTTP/1.1 100 Continue\r\n\r\n')).toBeUndefined();
    expect(finalStatus('')).toBeUndefined();
  });
});

describe('the battery table', () => {
  it('wraps figures and marks failures', () => {
    const table = formatTable([row('a', 'one two three four', true), row('bb', 'x', false, 'why')], 9);
    expect(table.split('\n')).toEqual([
      'check | figures   | verdict',
      '------+-----------+--------',
      'a     | one two   | pass',
      '      | three     | ',
      '      | four      | ',
      'bb    | x         | FAIL',
    ]);
  });
});
