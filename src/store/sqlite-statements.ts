// Kysely's SQLite driver calls prepare() for every query, and better-sqlite3 re-parses and re-plans the SQL
// each time: on the hot read paths that was most of a request's cost. Kysely emits the same SQL text for the
// same query shape (values travel as parameters), so a bounded cache of prepared statements keyed by that text
// serves nearly every query from the second call on. No library does this for Kysely's driver, hence by hand.
import type { Database, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import type { RunQuery } from './prepared.ts';

const MAX_STATEMENTS = 256;

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
        statement = database.prepare(sql);
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
 * connection. Only for reads that never run inside a write transaction of this process.
 */
export function sqliteRunner(database: SqliteDatabase): RunQuery {
  return async (sql, parameters) => database.prepare(sql).all(parameters) as unknown[];
}
