import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { basicAuthorization } from '../msv3/credentials.js';
import { msv3Credentials, utf8HeaderText } from './msv3-credentials.js';

/** A header value as Node hands it over: the bytes on the wire read as Latin-1. */
const onTheWire = (text: string, encoding: BufferEncoding) => Buffer.from(text, encoding).toString('latin1');

const requestWith = (password: string) =>
  ({ headers: { 'x-msv3-username': 'apotheke1', 'x-msv3-password': password } }) as unknown as FastifyRequest;

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
