// Statements prepared once per better-sqlite3 connection: the import's insert path and the game-key log work
// on the connection under a SQLite store's Kysely instance directly (adapter.ts). Kysely's SQLite dialect has
// one connection, and this is it, so what runs on it inside a write transaction runs inside that transaction.
import type { Database as SqliteHandle } from 'better-sqlite3';

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
