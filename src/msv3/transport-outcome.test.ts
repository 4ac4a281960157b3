import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../lib/clock.js';
import { verbindungTesten } from './operations/verbindung-testen.js';
import { bodyText, interpretResponse } from './transport-outcome.js';

describe('bodyText', () => {
  const reference = (body: Buffer) => {
    const text = body.toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };

  it('reads any bytes as UTF-8 without a leading byte order mark (ASCII through the Latin-1 copy)', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ maxLength: 300 }).map((a) => a.map((b) => b & 0x7f)),
      fc.string({ unit: 'grapheme', maxLength: 100 }).map((s) => Buffer.from(`\ufeff${s}`, 'utf8')),
    );
    fc.assert(
      fc.property(bytes, (array) => {
        const body = Buffer.from(array);
        expect(bodyText(body)).toBe(reference(body));
      }),
      { numRuns: 3000 },
    );
    expect(bodyText(Buffer.from('<a>Süd</a>', 'utf8'))).toBe('<a>Süd</a>');
    expect(bodyText(Buffer.alloc(0))).toBe('');
  });
});

describe('interpretResponse', () => {
  const context = {
    target: 'phoenix',
    operation: 'verbindungTesten',
    secrets: ['geheim'],
    clock: systemClock,
  };
  const response = (status: number, body: string) => ({
    kind: 'response' as const,
    status,
    contentType: 'application/soap+xml; charset=utf-8',
    body: Buffer.from(body, 'utf8'),
  });
  const soap11 = (payload: string) =>
    `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${payload}</soap:Body></soap:Envelope>`;

  it('says why a SOAP answer with an error status could not be read, without the secrets it echoes', () => {
    const result = interpretResponse(
      response(500, soap11('<soap:Fault>geheim</soap:Fault>')),
      verbindungTesten.decodeResponse,
      context,
    );
    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'http_status',
        status: 500,
        retryable: true,
        soapProblem: expect.stringMatching(
          /^a SOAP 1\.1 envelope: <soap:Envelope> is in http:\/\/schemas\.xmlsoap\.org\/soap\/envelope\//,
        ),
      },
    });
    expect(JSON.stringify(result)).not.toContain('geheim');
  });

  it('passes on the tolerated deviations of a decoded answer', () => {
    const decode = () => ({ kind: 'ok' as const, value: 1, deviations: ['qualified_return' as const] });
    expect(interpretResponse(response(200, '<x/>'), decode, context)).toEqual({
      ok: true,
      value: 1,
      status: 200,
      deviations: ['qualified_return'],
    });
    expect(
      interpretResponse(response(200, '<x/>'), () => ({ kind: 'ok' as const, value: 1 }), context),
    ).toEqual({
      ok: true,
      value: 1,
      status: 200,
    });
  });
});
