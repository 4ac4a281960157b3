import { inspect } from 'node:util';

/**
 * MSV3 login for one wholesaler call (docs/msv3.md "Authentication"): the user name is the customer id
 * (Kundenkennung, optionally `Niederlassung\kennung`). Passed per call; never stored, logged or put in an error.
 */
export interface Credentials {
  readonly username: string;
  readonly password: string;
}

const REDACTED = '[redacted]';

/**
 * Credentials that cannot leak by accident: `JSON.stringify`, `String()`, `util.inspect` (and so pino and
 * console.log) show `[redacted]`, and the values are private fields, invisible to `Object.keys` and spreading.
 */
class RedactedCredentials implements Credentials {
  readonly #username: string;
  readonly #password: string;

  constructor(username: string, password: string) {
    this.#username = username;
    this.#password = password;
  }

  get username(): string {
    return this.#username;
  }

  get password(): string {
    return this.#password;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return `Credentials ${REDACTED}`;
  }
}

export function createCredentials(username: string, password: string): Credentials {
  return new RedactedCredentials(username, password);
}

/** `Basic base64(utf8(username:password))`, for sending pre-emptively (MSV3 servers answer 401 otherwise). */
export function basicAuthorization(credentials: Credentials): string {
  // RFC 7617 §2: the user-id ends at the first colon, so a colon in it would silently shift into the password.
  if (credentials.username.includes(':')) throw new TypeError('MSV3 user name must not contain ":"');
  const token = Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64');
  return `Basic ${token}`;
}
