import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../core/errors.js';
import { type Credentials, createCredentials } from '../msv3/credentials.js';
import { PASSWORD_PATTERN, USERNAME_PATTERN, utf8HeaderText } from './msv3-credentials.js';
import { type DictionaryMember, parseDictionary, StructuredFieldError } from './structured-dictionary.js';

/**
 * `X-MSV3-Credentials`: the MSV3 logins for several wholesalers in one request (docs/multi-wholesaler.md
 * "Credentials for several wholesalers"), an RFC 8941 Dictionary keyed by wholesaler id in lower case (`credentialKeyOf`):
 *
 *   X-MSV3-Credentials: phoenix=("apotheke1" "geheim"), alliance=:a3VuZGU3OkfDvHRl:
 *
 * A member is an Inner List of two Strings (user name, password; printable ASCII) or a Byte Sequence of
 * `username:password` in UTF-8 as in HTTP Basic (any password). The values live in `Credentials` objects
 * for the calls of this one request, like X-MSV3-Username/X-MSV3-Password: never stored, logged or put in
 * an error (the logger redacts the header; errors name the wholesaler and the part, never the value).
 */

const HEADER = 'X-MSV3-Credentials';

export const Msv3CredentialDictionaryHeader = Type.Object({
  // Optional for validation so that a request without it gets `wholesaler_credentials_missing` naming
  // the header; the OpenAPI document marks it required (`credentialHeadersRequired`).
  'x-msv3-credentials': Type.Optional(
    Type.String({
      description:
        'MSV3 logins for every wholesaler of the request, an RFC 8941 dictionary keyed by wholesaler id in lower case (an id that starts with a digit gets a leading `*`: `*24pharma`): `phoenix=("apotheke1" "geheim"), alliance=:<base64 of user:password>:`. Used for this one request and never stored or logged. Without a member for a wholesaler of the request: 400 `wholesaler_credentials_missing` naming it.',
      examples: ['phoenix=("apotheke1" "geheim"), alliance=("kunde7" "passwort")'],
    }),
  ),
});

/**
 * The dictionary key of a wholesaler: its id in lower case. RFC 8941 keys start with a lower-case letter
 * or `*`, so an id that starts otherwise (a digit: `24pharma`) is written with a leading `*`
 * (`*24pharma`). Ids hold only letters, digits and `_ . -`, which keys allow after the first character.
 */
function credentialKeyOf(wholesaler: string): string {
  const key = wholesaler.toLowerCase();
  return /^[a-z*]/.test(key) ? key : `*${key}`;
}

/** The logins for `wholesalers` (ids as requested), from the header; 400 for what is missing or wrong. */
export function msv3CredentialsFor(
  request: FastifyRequest,
  wholesalers: readonly string[],
): ReadonlyMap<string, Credentials> {
  const members = credentialMembers(request.headers['x-msv3-credentials'], wholesalers[0] ?? null);
  const found = new Map<string, Credentials>();
  for (const wholesaler of wholesalers) {
    const key = credentialKeyOf(wholesaler);
    const member = members.get(key);
    if (member === undefined) {
      throw refused(
        `${HEADER} has no member for wholesaler ${wholesaler}; add \`${key}=("<user name>" "<password>")\`.`,
        wholesaler,
      );
    }
    found.set(wholesaler, credentialsOf(member, wholesaler));
  }
  return found;
}

function credentialMembers(
  header: string | string[] | undefined,
  first: string | null,
): Map<string, DictionaryMember> {
  // Node joins repeated lines of an unknown header with ", ", which is how RFC 8941 combines them.
  const text = Array.isArray(header) ? header.join(', ') : header;
  if (text === undefined || text.trim() === '') {
    throw refused(`The ${HEADER} header is required: the logins for every wholesaler of the request.`, first);
  }
  let entries: ReturnType<typeof parseDictionary>;
  try {
    entries = parseDictionary(text);
  } catch (error) {
    if (!(error instanceof StructuredFieldError)) throw error;
    throw refused(
      `${HEADER} is not an RFC 8941 dictionary (${error.message}); write \`phoenix=("<user name>" "<password>"), alliance=(…)\`.`,
      null,
    );
  }
  const members = new Map<string, DictionaryMember>();
  for (const { key, value } of entries) {
    if (members.has(key)) {
      throw refused(`${HEADER} names wholesaler ${key} twice; send one login per wholesaler.`, key);
    }
    members.set(key, value);
  }
  return members;
}

function credentialsOf(member: DictionaryMember, wholesaler: string): Credentials {
  const pair = loginPair(member);
  if (pair === null) {
    throw refused(
      `The ${HEADER} member for ${wholesaler} must be ("<user name>" "<password>") or a :byte sequence: of user:password.`,
      wholesaler,
    );
  }
  const [username, password] = pair;
  if (username === '' || username.length > 80 || !USERNAME_PATTERN.test(username)) {
    throw refused(
      `The ${HEADER} member for ${wholesaler}: the user name must be an MSV3 customer id: letters and digits, optionally prefixed by \`branch\\\`, at most 80 characters.`,
      wholesaler,
    );
  }
  if (!PASSWORD_PATTERN.test(password)) {
    throw refused(
      `The ${HEADER} member for ${wholesaler}: the password must be 1 to 256 printable characters.`,
      wholesaler,
    );
  }
  return createCredentials(username, password);
}

function loginPair(member: DictionaryMember): [string, string] | null {
  if (member.type === 'inner-list') {
    const [user, password, ...rest] = member.items;
    if (user?.type !== 'string' || password?.type !== 'string' || rest.length > 0) return null;
    return [user.value, password.value];
  }
  if (member.type === 'bytes') {
    // As HTTP Basic: UTF-8 where the bytes are UTF-8, else Latin-1 (utf8HeaderText decides).
    const text = utf8HeaderText(member.value.toString('latin1')) ?? '';
    const colon = text.indexOf(':');
    return colon === -1 ? null : [text.slice(0, colon), text.slice(colon + 1)];
  }
  return null;
}

function refused(message: string, wholesaler: string | null): ApiError {
  return new ApiError('wholesaler_credentials_missing', message, { param: HEADER, wholesaler });
}

/**
 * The user names of the header, by wholesaler, for the idempotency fingerprint: the same key sent with
 * another pharmacy's logins is another request. Never the passwords. Null without the header; members
 * that do not parse give no name (the route refuses such a header anyway).
 */
export function credentialUserNames(header: string | string[] | undefined): Record<string, string> | null {
  const text = Array.isArray(header) ? header.join(', ') : header;
  if (text === undefined) return null;
  const names: Record<string, string> = {};
  try {
    for (const { key, value } of parseDictionary(text)) {
      const pair = loginPair(value);
      if (pair !== null) names[key] = pair[0];
    }
  } catch (error) {
    if (!(error instanceof StructuredFieldError)) throw error;
  }
  return names;
}
