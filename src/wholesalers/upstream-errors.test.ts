import { describe, expect, it } from 'vitest';
import { type UpstreamErrorFields, upstreamError } from '../msv3/upstream-error.js';
import { apiErrorFromUpstream, UPSTREAM_ERROR_KINDS, upstreamErrorKind } from './upstream-errors.js';

const base = { target: 'sandbox/phoenix', operation: 'bestellen', maybeDelivered: false };
const fault = (kind: string, soapCode = 'Receiver') => ({
  ...base,
  reason: 'soap_fault' as const,
  status: 500,
  fault: { kind, soapCode, reason: 'r', errorCode: 'E1', userText: 'Bitte später', technicalText: 'db down' },
});

describe('apiErrorFromUpstream', () => {
  it.each<[string, UpstreamErrorFields, string, number]>([
    [
      'credentials',
      { ...base, reason: 'credentials_rejected', status: 401 },
      'wholesaler_credentials_rejected',
      401,
    ],
    [
      'refused',
      { ...base, reason: 'unreachable', code: 'ECONNREFUSED', detail: 'x' },
      'wholesaler_unreachable',
      502,
    ],
    [
      'policy',
      { ...base, reason: 'unreachable', code: 'ADDRESS_NOT_ALLOWED', detail: 'x' },
      'endpoint_not_allowed',
      400,
    ],
    ['timeout', { ...base, reason: 'timeout', phase: 'headers', timeoutMs: 10 }, 'wholesaler_timeout', 504],
    [
      'http',
      { ...base, reason: 'http_status', status: 500, bodySnippet: 'broken' },
      'wholesaler_http_error',
      502,
    ],
    [
      'http 503',
      { ...base, reason: 'http_status', status: 503, bodySnippet: 'down' },
      'wholesaler_unavailable',
      503,
    ],
    ['decode', { ...base, reason: 'decode', status: 200, detail: 'bad' }, 'wholesaler_bad_response', 502],
    [
      'too large',
      { ...base, reason: 'too_large', status: 200, limitBytes: 10 },
      'wholesaler_bad_response',
      502,
    ],
    ['circuit', { ...base, reason: 'circuit_open', retryAfterMs: 2500 }, 'wholesaler_circuit_open', 503],
    [
      'overloaded',
      { ...base, reason: 'overloaded', cause: 'queue_full', retryAfterMs: 2500 },
      'gateway_busy',
      503,
    ],
    [
      'shutdown after sending',
      { ...base, reason: 'shutdown', maybeDelivered: true },
      'wholesaler_timeout',
      504,
    ],
    ['shutdown before sending', { ...base, reason: 'shutdown' }, 'service_unavailable', 503],
    ['server fault', fault('ServerFault') as UpstreamErrorFields, 'wholesaler_fault', 502],
    [
      'validation fault',
      fault('ValidationFault', 'Sender') as UpstreamErrorFields,
      'wholesaler_rejected_request',
      422,
    ],
    [
      'authorization fault',
      fault('AuthorizationFault') as UpstreamErrorFields,
      'wholesaler_function_not_agreed',
      403,
    ],
    ['dos fault', fault('DenialOfServiceFault') as UpstreamErrorFields, 'wholesaler_throttled', 503],
    [
      'unknown note',
      fault('LieferscheinOderBarcodeUnbekanntFault') as UpstreamErrorFields,
      'delivery_not_found',
      404,
    ],
  ])('maps %s', (_name, fields, kind, status) => {
    const error = apiErrorFromUpstream(upstreamError(fields), 'phoenix');
    expect(error.kind).toBe(kind);
    expect(upstreamErrorKind(upstreamError(fields))).toBe(kind);
    expect(UPSTREAM_ERROR_KINDS).toContain(kind);
    expect(error.status).toBe(status);
    expect(error.options.wholesaler).toBe('phoenix');
    expect(error.message).toContain('phoenix');
    expect(error.message).not.toContain('sandbox/');
  });

  it("carries the wholesaler's fault texts and a Retry-After where waiting helps", () => {
    const body = apiErrorFromUpstream(
      upstreamError(fault('ServerFault') as UpstreamErrorFields),
      'phoenix',
    ).toBody('req_1');
    expect(body.upstream).toEqual({
      kind: 'ServerFault',
      http_status: 500,
      error_code: 'E1',
      user_text: 'Bitte später',
      technical_text: 'db down',
    });
    const circuit = apiErrorFromUpstream(
      upstreamError({ ...base, reason: 'circuit_open', retryAfterMs: 2500 }),
      'phoenix',
    );
    expect(circuit.options.retryAfter).toBe(3);
  });

  it("answers the gateway's own limit with gateway_busy and a Retry-After of the queue's drain time, 1 to 60 s", () => {
    const busy = (retryAfterMs: number) =>
      apiErrorFromUpstream(
        upstreamError({ ...base, reason: 'overloaded', cause: 'wait_too_long', retryAfterMs }),
        'phoenix',
      );
    expect(busy(2_100).kind).toBe('gateway_busy');
    expect(busy(2_100).options.retryAfter).toBe(3);
    expect(busy(0).options.retryAfter).toBe(1);
    expect(busy(3_600_000).options.retryAfter).toBe(60);
    expect(busy(2_100).message).toContain('retry in 3 s');
  });

  it('says whether a call the shutdown stopped may have reached the wholesaler, and to retry', () => {
    const sent = apiErrorFromUpstream(
      upstreamError({ ...base, reason: 'shutdown', maybeDelivered: true }),
      'phoenix',
    );
    expect(sent.message).toContain('may have reached it');
    expect(sent.options.retryAfter).toBe(1);
    const unsent = apiErrorFromUpstream(upstreamError({ ...base, reason: 'shutdown' }), 'phoenix');
    expect(unsent.message).toContain('not sent');
    expect(unsent.options.retryAfter).toBe(1);
  });

  it('keeps the element names of decoder words, which read like markup, and still drops markup', () => {
    const decode = (detail: string) =>
      apiErrorFromUpstream(upstreamError({ ...base, reason: 'decode', status: 200, detail }), 'phoenix')
        .message;
    expect(
      decode(
        'return: element in the wrong namespace: found <return> in urn:msv3:v2, the XSD has it unqualified (no namespace)',
      ),
    ).toBe(
      "The answer of phoenix could not be decoded: return: element in the wrong namespace: found 'return' in urn:msv3:v2, the XSD has it unqualified (no namespace)",
    );
    expect(decode("Tour: '<script>alert(1)</script><b>x</b>' is too long")).toBe(
      "The answer of phoenix could not be decoded: Tour: ' 'b'x'/b'' is too long",
    );
  });

  it('names why a fault has no MSV3 bean, and why a SOAP answer with an error status could not be read', () => {
    const beanless = {
      ...base,
      reason: 'soap_fault' as const,
      status: 500,
      fault: {
        kind: 'Unknown' as const,
        soapCode: 'Sender',
        reason: 'bad',
        beanProblem:
          'the fault bean soap:Envelope/soap:Body/soap:Fault/soap:Detail/soap:ValidationFault is in http://www.w3.org/2003/05/soap-envelope, not in urn:msv3:v2 (or urn:msv3:v1)',
      },
    };
    const fault = apiErrorFromUpstream(upstreamError(beanless), 'phoenix');
    expect(fault.kind).toBe('wholesaler_fault');
    expect(fault.message).toBe(
      'The wholesaler phoenix answered with a SOAP fault without an MSV3 fault bean (the fault bean soap:Envelope/soap:Body/soap:Fault/soap:Detail/soap:ValidationFault is in http://www.w3.org/2003/05/soap-envelope, not in urn:msv3:v2 (or urn:msv3:v1)): bad',
    );
    const soap11 = apiErrorFromUpstream(
      upstreamError({
        ...base,
        reason: 'http_status',
        status: 500,
        bodySnippet: '<soap:Envelope …',
        soapProblem: 'a SOAP 1.1 envelope: <soap:Envelope> is in http://schemas.xmlsoap.org/soap/envelope/',
      }),
      'phoenix',
    );
    expect(soap11.kind).toBe('wholesaler_http_error');
    expect(soap11.message).toBe(
      "The wholesaler phoenix answered HTTP 500 with a SOAP answer that could not be decoded: a SOAP 1.1 envelope: 'soap:Envelope' is in http://schemas.xmlsoap.org/soap/envelope/. Retry in 5 s.",
    );
  });
});
