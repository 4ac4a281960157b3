import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { basicAuthorization } from '../msv3/credentials.js';
import { msv3Credentials, utf8HeaderText } from './msv3-credentials.js';

/** A header value as Node hands it over: the bytes on the wire read as Latin-1. */
const onTheWire = (text: string, encoding: BufferEncoding) => Buffer.from(text, encoding).toString('latin1');

const requestWith = (password: string, rawHeaders?: string[]) =>
  ({
    headers: { 'x-msv3-username': 'apotheke1', 'x-msv3-password': password },
    raw: {
      rawHeaders: rawHeaders ?? ['X-MSV3-Username', 'apotheke1', 'X-MSV3-Password', password],
    },
  }) as unknown as FastifyRequest;

const sentPassword = (password: string) => {
  const token = basicAuthorization(msv3Credentials(requestWith(password))).slice('Basic '.length);
  return Buffer.from(token, 'base64').toString('utf8').slice('apotheke1:'.length);
};

describe('X-MSV3-Password encoding', () => {
  it('reads a UTF-8 password with umlauts as the pharmacy typed it', () => {
    expect(sentPassword(onTheWire('Apotheke-Süd-ß€', 'utf8'))).toBe('Apotheke-Süd-ß€');
  });

  it('keeps a password sent as Latin-1 bytes (not valid UTF-8) as Latin-1', () => {
    expect(sentPassword(onTheWire('Grün', 'latin1'))).toBe('Grün');
  });

  it('leaves ASCII and already-decoded text untouched', () => {
    expect(utf8HeaderText('geheim')).toBe('geheim');
    expect(utf8HeaderText('Süd€')).toBe('Süd€');
    expect(utf8HeaderText(undefined)).toBeUndefined();
  });
});

describe('repeated credential headers', () => {
  it('refuses a repeated X-MSV3-Password instead of sending the joined value to the wholesaler', () => {
    const request = requestWith('one, two', [
      'X-MSV3-Username',
      'apotheke1',
      'X-MSV3-Password',
      'one',
      'x-msv3-password',
      'two',
    ]);
    expect(() => msv3Credentials(request, 'phoenix')).toThrow(
      expect.objectContaining({
        kind: 'wholesaler_credentials_missing',
        message: 'Send the X-MSV3-Password header once; this request carries it several times.',
        options: expect.objectContaining({ param: 'X-MSV3-Password', wholesaler: 'phoenix' }),
      }),
    );
  });

  it('refuses a repeated X-MSV3-Username with a message that says so', () => {
    const request = requestWith('geheim', [
      'X-MSV3-USERNAME',
      'a',
      'X-MSV3-Username',
      'b',
      'X-MSV3-Password',
      'geheim',
    ]);
    expect(() => msv3Credentials(request)).toThrow(/Send the X-MSV3-Username header once/);
  });

  it('accepts a password that itself contains a comma', () => {
    expect(sentPassword('one, two')).toBe('one, two');
  });
});
