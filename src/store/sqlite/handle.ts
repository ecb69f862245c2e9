// The better-sqlite3 connection under a SQLite store's Kysely instance: the import's insert path, the game-key
// log and the checkpoints work on it directly, with statements prepared once per connection. Kysely's SQLite dialect has one connection, and this is it, so
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

/** What `make` gives for a connection, made on its first use there and kept as long as the connection. */
export function perConnection<T>(make: (handle: SqliteHandle) => T): (handle: SqliteHandle) => T {
  const made = new WeakMap<SqliteHandle, T>();
  return (handle) => {
    let value = made.get(handle);
    if (value === undefined) {
      value = make(handle);
      made.set(handle, value);
    }
    return value;
  };
}
