import { scrubPasswords, withoutPassword } from '../lib/url-password.js';
import { sqliteFile } from './database.js';

/** What a driver's error carries that tells the causes apart (pg: SQLSTATE or a Node errno code). */
interface DriverError {
  code?: string;
  message?: string;
  hostname?: string;
  address?: string;
  port?: number;
}

/**
 * The error for a database that cannot be opened at start-up (`serve`, `migrate`, `keys …`): it names
 * DATABASE_URL without its password, says the cause in words and keeps the driver's own message
 * (passwords scrubbed) in brackets, e.g. `DATABASE_URL postgres://msv3@db:5432/msv3: unknown host: DNS
 * finds no address for db (getaddrinfo ENOTFOUND db)`. docs/operating.md lists the causes.
 */
export function databaseStartError(url: string, cause: unknown): Error {
  const error: DriverError = typeof cause === 'object' && cause !== null ? cause : { message: String(cause) };
  const original = scrubPasswords(error.message ?? String(cause), url);
  const words = url.startsWith('sqlite:') ? sqliteCause(url, error) : postgresCause(url, error);
  const shown = url.startsWith('sqlite:') ? url : withoutPassword(url);
  return new Error(`DATABASE_URL ${shown}: ${words} (${original})`, { cause });
}

function postgresCause(url: string, error: DriverError): string {
  const { host, port, role, database } = postgresParts(url);
  const at = `${error.address ?? host}:${error.port ?? port}`;
  const message = error.message ?? '';
  switch (error.code) {
    case 'ECONNREFUSED':
      return `nothing listening: no server accepts connections at ${at}; is PostgreSQL running there?`;
    case 'ENOTFOUND':
    case 'EAI_NONAME':
      return `unknown host: DNS has no address for ${error.hostname ?? host}`;
    case 'EAI_AGAIN':
      return `unknown host: DNS did not answer for ${error.hostname ?? host}`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `unreachable: ${at} cannot be reached from here (a firewall, a wrong address?)`;
    case '28P01':
      return `wrong password: the server refused the password of ${role}`;
    case '28000':
      if (/role .* does not exist/.test(message)) return `unknown role: the server has no ${role}`;
      if (/pg_hba\.conf/.test(message)) {
        return `refused: the server's pg_hba.conf lets no ${role} in from this host`;
      }
      return `refused: the server refused ${role}`;
    case '3D000':
      return `database missing: there is no database ${database} on ${host}:${port}; create it or fix the name`;
    case '53300':
      return 'too many connections: the server has no connection left (max_connections)';
    case '57P03':
      return 'not ready: the server is starting up or shutting down';
  }
  if (/password must be a string/.test(message)) {
    return `password missing: the server asks for a password and DATABASE_URL has none for ${role}`;
  }
  if (/timeout/i.test(message)) return `no answer: ${at} did not answer within 5 s`;
  if (/SSL/.test(message))
    return 'TLS mismatch: check sslmode in DATABASE_URL against what the server offers';
  return 'PostgreSQL cannot be opened';
}

function sqliteCause(url: string, error: DriverError): string {
  const file = sqliteFile(url) ?? url;
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
    case 'SQLITE_READONLY':
      return `no permission to create or write the SQLite file ${file} or its folder`;
    case 'SQLITE_CANTOPEN':
      return `the SQLite file ${file} cannot be opened (a missing folder or no permission?)`;
    case 'SQLITE_NOTADB':
      return `${file} is not an SQLite database`;
    case 'SQLITE_CORRUPT':
      return `the SQLite file ${file} is damaged`;
  }
  return `the SQLite file ${file} cannot be opened`;
}

/** The parts of a PostgreSQL URL the causes name; what the URL leaves out, pg takes from PG* or defaults. */
function postgresParts(url: string): { host: string; port: string; role: string; database: string } {
  try {
    const parsed = new URL(url);
    const user = decodeURIComponent(parsed.username);
    const database = decodeURIComponent(parsed.pathname.slice(1)) || user;
    return {
      host: parsed.hostname || 'localhost',
      port: parsed.port || '5432',
      role: user === '' ? "role of the operating system's user (DATABASE_URL names none)" : `role "${user}"`,
      database: database === '' ? '(DATABASE_URL names none)' : `"${database}"`,
    };
  } catch {
    return { host: 'the host', port: '5432', role: 'the role', database: '(unnamed)' };
  }
}
