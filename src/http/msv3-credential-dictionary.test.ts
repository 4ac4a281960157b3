import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { msv3CredentialsFor } from './msv3-credential-dictionary.js';

function requestWith(header: string | string[] | undefined): FastifyRequest {
  return { headers: header === undefined ? {} : { 'x-msv3-credentials': header } } as FastifyRequest;
}

function refusal(header: string | string[] | undefined, wholesalers: string[]): ApiError {
  try {
    msv3CredentialsFor(requestWith(header), wholesalers);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('accepted');
}

const basic = (pair: string) => `:${Buffer.from(pair, 'utf8').toString('base64')}:`;

describe('X-MSV3-Credentials', () => {
  it('reads a login per wholesaler, as two strings or as a byte sequence of user:password', () => {
    const logins = msv3CredentialsFor(
      requestWith(`phoenix=("apotheke1" "ge\\"heim"), alliance=${basic('PLA\\kunde7:Süd:pass')}`),
      ['phoenix', 'alliance'],
    );
    expect([...logins].map(([id, c]) => [id, c.username, c.password])).toEqual([
      ['phoenix', 'apotheke1', 'ge"heim'],
      ['alliance', 'PLA\\kunde7', 'Süd:pass'],
    ]);
  });

  it('matches wholesaler ids case-insensitively, ignores members for other wholesalers, joins repeated lines', () => {
    const logins = msv3CredentialsFor(requestWith(['noweda=("a1" "x")', 'mywholesaler=("b2" "y")']), [
      'MyWholesaler',
    ]);
    expect(logins.get('MyWholesaler')?.username).toBe('b2');
  });

  it('names the header and the first wholesaler when the header is missing', () => {
    const error = refusal(undefined, ['phoenix', 'alliance']);
    expect(error.kind).toBe('wholesaler_credentials_missing');
    expect(error.options).toMatchObject({ param: 'X-MSV3-Credentials', wholesaler: 'phoenix' });
  });

  it('names the wholesaler without a member', () => {
    const error = refusal('phoenix=("a1" "secret-one")', ['phoenix', 'sanacorp']);
    expect(error.message).toContain('no member for wholesaler sanacorp');
    expect(error.options).toMatchObject({ wholesaler: 'sanacorp' });
  });

  it.each([
    ['phoenix=("a1" "pw-secret-1"), phoenix=("a2" "pw-secret-2")', 'twice', 'phoenix'],
    ['phoenix=("a1")', 'must be ("<user name>" "<password>")', 'phoenix'],
    ['phoenix=("a1" "pw-secret-1" "x")', 'must be ("<user name>" "<password>")', 'phoenix'],
    [`phoenix=${basic('no-colon-pw-secret-1')}`, 'must be ("<user name>" "<password>")', 'phoenix'],
    ['phoenix=("not a customer" "pw-secret-1")', 'the user name must be', 'phoenix'],
    ['phoenix=("a1" "")', 'the password must be', 'phoenix'],
    ['phoenix=("a1" "pw-secret-1") alliance', 'not an RFC 8941 dictionary', null],
    ['phoenix=("a1" "pw-secret-1\\x")', 'not an RFC 8941 dictionary', null],
  ])('refuses %s naming what is wrong, never the password', (header, words, wholesaler) => {
    const error = refusal(header, ['phoenix']);
    expect(error.kind).toBe('wholesaler_credentials_missing');
    expect(error.message).toContain(words);
    expect(error.options).toMatchObject({ param: 'X-MSV3-Credentials', wholesaler });
    expect(JSON.stringify({ message: error.message, options: error.options })).not.toMatch(/pw-secret/);
  });
});
