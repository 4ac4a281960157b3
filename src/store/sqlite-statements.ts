import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** How many prepared statements a connection keeps: the gateway's queries are far fewer texts. */
const KEPT_STATEMENTS = 256;

/**
 * better-sqlite3 as Kysely's SQLite dialect uses it, with each SQL text prepared once. Kysely's driver
 * prepares every query anew, so SQLite parsed and planned even the webhook worker's look for due
 * deliveries, made once a second, every time (docs/performance.md). A prepared statement can run again
 * with other parameters; Kysely runs each one with `all` or `run`, which finish before they return, so a
 * statement serves one query at a time. One that is busy (an `iterate` not finished) is not handed out
 * again: that query gets a statement of its own. The least recently used statement goes once `kept` are
 * held; SQLite prepares a kept statement again by itself when the schema changes (a migration).
 */
export function withStatementCache(database: BetterSqlite3.Database, kept = KEPT_STATEMENTS): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      const known = statements.get(sql);
      if (known !== undefined && !known.busy) {
        // Moved to the end: the Map's order is the order of last use.
        statements.delete(sql);
        statements.set(sql, known);
        return known;
      }
      const statement = database.prepare(sql);
      if (known === undefined) {
        if (statements.size >= kept) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
