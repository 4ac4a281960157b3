/**
 * Connection URLs (DATABASE_URL, REDIS_URL) shown in logs and error messages: the user name, host, port
 * and database stay (they help, and are no secret), the password goes, whether in the user part or in a
 * `password` / `sslpassword` query parameter.
 */

const PASSWORD_PARAMETERS = ['password', 'sslpassword'];

/** The URL without its password; `(not a URL)` for text that does not parse. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    for (const name of PASSWORD_PARAMETERS) parsed.searchParams.delete(name);
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/** The URL's passwords, as written and decoded (empty ones left out), to scrub them from a message. */
function passwordsIn(url: string): string[] {
  try {
    const parsed = new URL(url);
    const written = [
      parsed.password,
      ...PASSWORD_PARAMETERS.map((name) => parsed.searchParams.get(name) ?? ''),
    ];
    return [...new Set(written.flatMap((p) => [p, safeDecode(p)]))].filter((p) => p !== '');
  } catch {
    return [];
  }
}

/** `message` with every password of `url` replaced by `***`. */
export function scrubPasswords(message: string, url: string): string {
  let scrubbed = message;
  for (const password of passwordsIn(url)) scrubbed = scrubbed.split(password).join('***');
  return scrubbed;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
