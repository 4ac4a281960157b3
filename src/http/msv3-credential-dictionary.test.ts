import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { credentialDictionary } from '../../packages/client/src/client.js';
import { ApiError } from '../core/errors.js';
import { msv3CredentialsFor } from './msv3-credential-dictionary.js';
import { CUSTOM_WHOLESALER_ID_PATTERN } from './schemas/patterns.js';

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

  it('reads the login of a wholesaler whose id starts with a digit under its id with a leading *', () => {
    const logins = msv3CredentialsFor(requestWith('phoenix=("a1" "x"), *24pharma=("b2" "y")'), [
      'phoenix',
      '24Pharma',
    ]);
    expect(logins.get('24Pharma')?.username).toBe('b2');
    const error = refusal('phoenix=("a1" "x")', ['phoenix', '24pharma']);
    expect(error.message).toContain('add `*24pharma=("<user name>" "<password>")`');
    // Without the `*` the header is no RFC 8941 dictionary at all.
    expect(refusal('24pharma=("b2" "y")', ['24pharma']).message).toContain('not an RFC 8941 dictionary');
  });

  it('reads every header the typed client builds, for any wholesaler id (property)', () => {
    const id = fc.stringMatching(new RegExp(CUSTOM_WHOLESALER_ID_PATTERN)).filter((x) => x.length <= 80);
    const login = fc.record({
      username: fc.stringMatching(/^[A-Za-z0-9]{1,20}$/),
      password: fc.string({ minLength: 1, maxLength: 30, unit: 'grapheme' }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(id, { minLength: 1, maxLength: 10, selector: (x) => x.toLowerCase() }),
        login,
        (ids, pair) => {
          const header = credentialDictionary(
            Object.fromEntries(ids.map((wholesaler) => [wholesaler, pair])),
          );
          const logins = msv3CredentialsFor(requestWith(header), ids);
          for (const wholesaler of ids) {
            expect(logins.get(wholesaler)?.username).toBe(pair.username);
            expect(logins.get(wholesaler)?.password).toBe(pair.password);
          }
        },
      ),
    );
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
