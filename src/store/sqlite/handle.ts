// The better-sqlite3 connection under a SQLite store's Kysely instance: the import's insert path, the game-key
// log and the checkpoints work on it directly. Kysely's SQLite dialect has one connection, and this is it, so
// what runs on it inside Store.write runs inside the write transaction.
import type { Database as SqliteHandle } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from '../schema.ts';

const handles = new WeakMap<Kysely<DB>, SqliteHandle>();

/** Records `handle` as the one connection under the SQLite store `db` (connect.ts). */
export function registerSqliteHandle(db: Kysely<DB>, handle: SqliteHandle): void {
  handles.set(db, handle);
}

/** The SQLite connection under the store `db`, if it is one. */
export function sqliteHandleOf(db: Kysely<DB>): SqliteHandle | undefined {
  return handles.get(db);
}
