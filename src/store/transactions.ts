// A write transaction on either dialect: on SQLite one that holds the store's write lock from its first
// statement (BEGIN IMMEDIATE), so that a read in it sees what the write after it is based on; on PostgreSQL
// Kysely's (READ COMMITTED, with the row locks its statements take).
import { type Kysely, sql } from 'kysely';
import type { DB } from './schema.ts';
import type { Dialect } from './types.ts';

export async function writeTransaction<T>(
  db: Kysely<DB>,
  dialect: Dialect,
  fn: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  if (dialect === 'postgres') return db.transaction().execute(fn);
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) make SQLite roll the transaction back
      // itself; a ROLLBACK then fails with "no transaction is active", which must not hide the cause.
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
}
