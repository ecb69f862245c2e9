// Kysely's SQLite driver calls prepare() for every query, and better-sqlite3 re-parses and re-plans the SQL
// each time: on the hot read paths that is most of a request's cost. Kysely emits the same SQL text for the
// same query shape (values travel as parameters), so a bounded cache of prepared statements keyed by that
// text serves nearly every query from the second call on. No library does this for Kysely's driver, hence by
// hand.
import type { Database, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import type { RunQuery } from '../prepared.ts';

const MAX_STATEMENTS = 256;

/**
 * The SQL with every bound parameter written `+?` instead of `?` (outside quoted strings and identifiers).
 *
 * Why: when a parameter can steer the query plan (`LIMIT ?`, `col = ?` in most WHERE clauses, every join),
 * SQLite marks the statement to be re-planned on its next run after that parameter is rebound, and
 * better-sqlite3 clears every statement's bindings after each run: so such statements would be parsed and
 * planned again on every call, most of the token lookup's cost. Unary plus is a no-op on the
 * value, but SQLite does not look through it for a bound value, so plans are made once, from the schema
 * alone (what SQLITE_DBCONFIG_ENABLE_QPSG would do; better-sqlite3 cannot set it). The plans are the same:
 * the store has no statistics tables (ANALYZE is never run) and no LIKE on a bound pattern.
 */
export function planOnce(sql: string): string {
  let out = '';
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = undefined; // a doubled quote closes and reopens: same result
    } else if (ch === "'" || ch === '"' || ch === '`') {
      quote = ch;
    } else if (ch === '?') {
      out += '+';
    }
    out += ch;
  }
  return out;
}

/**
 * The database as Kysely's SqliteDialect sees it, with prepare() memoised (least recently used first out).
 * Safe because the store never streams (Statement.iterate) a query, so a cached statement is never busy
 * when it is reused.
 */
export function withStatementCache(database: Database): SqliteDatabase {
  const cache = new Map<string, Statement>();
  return {
    close: () => {
      cache.clear();
      database.close();
    },
    prepare: (sql: string) => {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql); // re-inserted below: Map order is the recency order
      } else {
        statement = database.prepare(planOnce(sql));
        if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * Runs the store's compiled hot reads (prepared.ts) on the cached statements directly, skipping Kysely's
 * driver (its connection mutex and result wrapping): better-sqlite3 answers synchronously on the same
 * connection. Only for reads that never run inside a write transaction of this process: there, they would
 * see its rows before it commits (or rolls back, and gives its change sequence values out again), and a feed
 * cursor could pass changes that a reader then never sees. The server writes no games today; the check makes
 * a future write path fail in the tests at once instead of losing changes in production.
 */
export function sqliteRunner(
  database: SqliteDatabase,
  connection: Pick<Database, 'inTransaction'>,
): RunQuery {
  return async (sql, parameters) => {
    if (connection.inTransaction)
      throw new Error('a hot read ran inside a write transaction of this process');
    return database.prepare(sql).all(parameters) as unknown[];
  };
}
