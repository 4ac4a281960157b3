import { describe, expect, it, vi } from 'vitest';
import { systemClock } from '../lib/clock.js';
import { verbindungTesten } from './operations/verbindung-testen.js';
import { interpretResponse } from './transport-outcome.js';

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

  it('answers a 15 MB error page or envelope at once: the envelope refused unread, the page by its start', () => {
    const decode = vi.fn(verbindungTesten.decodeResponse);
    const page = `<html><body>${'geheim: Backend down\n'.repeat(750_000)}</body></html>`;
    const html = { ...response(500, page), contentType: 'text/html' };
    const paged = interpretResponse(html, decode, context);
    expect(paged).toMatchObject({
      ok: false,
      error: {
        reason: 'http_status',
        status: 500,
        bodySnippet: expect.stringMatching(/^<html><body>\[redacted\]: Backend down \[redacted\]: .*…$/),
      },
    });
    const envelope = soap11(`<soap:Fault>${'geheim '.repeat(2_500_000)}</soap:Fault>`);
    const refused = interpretResponse(response(200, envelope), decode, context);
    expect(refused).toMatchObject({
      ok: false,
      error: {
        reason: 'decode',
        detail: `answer of ${envelope.length} bytes exceeds the limit of 4194304 characters (maxLength)`,
      },
    });
    expect(decode).not.toHaveBeenCalled();
    expect(JSON.stringify([paged, refused])).not.toContain('geheim');
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
