// What the resource modules (accounts.ts, databases.ts, game-writes.ts, ...) get from the Store: its
// connection, its dialect, and its write transactions (Store.write, Store.transaction).
import type { Kysely, Transaction } from 'kysely';
import type { Changes } from './change-allocation.ts';
import type { DB } from './schema.ts';
import type { Dialect } from './types.ts';

/** The store's connection, or a transaction on it. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface StoreContext {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  /** Runs fn in a write transaction on one owner's data (Store.write). */
  write<T>(ownerId: string, fn: (trx: Kysely<DB>, changes: Changes) => Promise<T>): Promise<T>;
  /** Runs fn in a write transaction that touches no game (Store.transaction). */
  transaction<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T>;
}
