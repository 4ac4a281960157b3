import { describe, expect, it } from 'vitest';
import type { Msv3Fault, Msv3FaultKind } from './result.js';
import {
  describeUpstreamError,
  faultMayFollowProcessing,
  signalsOutage,
  type UpstreamErrorFields,
  upstreamError,
} from './upstream-error.js';

const base = { target: 'phoenix', operation: 'bestellen', maybeDelivered: false };
const fault = (kind: Msv3FaultKind, soapCode = 'Receiver'): Msv3Fault => ({ kind, soapCode, reason: 'r' });

const cases: [string, UpstreamErrorFields, { retryable: boolean; outage: boolean }][] = [
  [
    'refused',
    { ...base, reason: 'unreachable', code: 'ECONNREFUSED', detail: 'd' },
    { retryable: true, outage: true },
  ],
  [
    'address policy',
    { ...base, reason: 'unreachable', code: 'ADDRESS_NOT_ALLOWED', detail: 'd' },
    { retryable: false, outage: false },
  ],
  [
    'transport closed',
    { ...base, reason: 'unreachable', code: 'TRANSPORT_CLOSED', detail: 'd' },
    { retryable: true, outage: false },
  ],
  [
    'timeout',
    { ...base, reason: 'timeout', phase: 'headers', timeoutMs: 1 },
    { retryable: true, outage: true },
  ],
  [
    '503',
    { ...base, reason: 'http_status', status: 503, bodySnippet: '' },
    { retryable: true, outage: true },
  ],
  [
    '429',
    { ...base, reason: 'http_status', status: 429, bodySnippet: '' },
    { retryable: true, outage: false },
  ],
  [
    '404',
    { ...base, reason: 'http_status', status: 404, bodySnippet: '' },
    { retryable: false, outage: false },
  ],
  [
    '302',
    { ...base, reason: 'http_status', status: 302, bodySnippet: '' },
    { retryable: false, outage: false },
  ],
  ['401', { ...base, reason: 'credentials_rejected', status: 401 }, { retryable: false, outage: false }],
  [
    'ServerFault',
    { ...base, reason: 'soap_fault', status: 500, fault: fault('ServerFault') },
    { retryable: true, outage: false },
  ],
  [
    'DenialOfServiceFault',
    { ...base, reason: 'soap_fault', status: 500, fault: fault('DenialOfServiceFault') },
    { retryable: true, outage: false },
  ],
  [
    'ValidationFault',
    { ...base, reason: 'soap_fault', status: 500, fault: fault('ValidationFault') },
    { retryable: false, outage: false },
  ],
  [
    'AuthorizationFault',
    { ...base, reason: 'soap_fault', status: 500, fault: fault('AuthorizationFault') },
    { retryable: false, outage: false },
  ],
  [
    'unknown Receiver fault',
    { ...base, reason: 'soap_fault', status: 500, fault: fault('Unknown') },
    { retryable: true, outage: false },
  ],
  [
    'unknown Sender fault',
    { ...base, reason: 'soap_fault', status: 400, fault: fault('Unknown', 'Sender') },
    { retryable: false, outage: false },
  ],
  ['decode', { ...base, reason: 'decode', status: 200, detail: 'd' }, { retryable: false, outage: false }],
  [
    'too large',
    { ...base, reason: 'too_large', status: 200, limitBytes: 1 },
    { retryable: false, outage: false },
  ],
  ['circuit open', { ...base, reason: 'circuit_open', retryAfterMs: 1 }, { retryable: true, outage: false }],
  [
    'overloaded',
    { ...base, reason: 'overloaded', cause: 'queue_full', retryAfterMs: 0 },
    { retryable: true, outage: false },
  ],
];

describe('upstream errors', () => {
  it.each(cases)('%s: retryable and breaker rules', (_name, fields, expected) => {
    const error = upstreamError(fields);
    expect(error.retryable).toBe(expected.retryable);
    expect(signalsOutage(error)).toBe(expected.outage);
  });

  it.each(cases)('%s: describes itself with target and operation', (_name, fields) => {
    expect(describeUpstreamError(upstreamError(fields))).toMatch(/^wholesaler phoenix \(bestellen\): \S/);
  });

  it('leaves open whether a server-side fault came after processing, but not a refusal', () => {
    expect(faultMayFollowProcessing(fault('ServerFault'))).toBe(true);
    expect(faultMayFollowProcessing(fault('Unknown'))).toBe(true);
    expect(faultMayFollowProcessing(fault('Unknown', 'Sender'))).toBe(false);
    expect(faultMayFollowProcessing(fault('ValidationFault'))).toBe(false);
    expect(faultMayFollowProcessing(fault('DenialOfServiceFault'))).toBe(false);
  });

  it('says when a timed-out request may have been delivered', () => {
    const timeout = { ...base, reason: 'timeout', phase: 'headers', timeoutMs: 30_000 } as const;
    expect(describeUpstreamError(upstreamError({ ...timeout, maybeDelivered: true }))).toBe(
      'wholesaler phoenix (bestellen): no response headers within 30000 ms; the request may have been delivered',
    );
    expect(describeUpstreamError(upstreamError(timeout))).not.toContain('delivered');
  });
});
