// The lock under which one process applies the pending migrations, held by their transaction. Kysely's own
// is a session advisory lock (pg_advisory_lock) taken before the transaction and released after it: through
// a pooler in transaction mode the three statements may reach three server sessions, so the lock stays held
// on the first one, for nobody, and the next start waits an hour for it. A transaction-level lock
// (pg_advisory_xact_lock) is held by the migrations' transaction and let go at its commit or rollback.
import { type Kysely, PostgresAdapter as KyselyPostgresAdapter, PostgresDialect, sql } from 'kysely';
import type { MigrationProvider, MigrationResultSet } from 'kysely/migration';
import { Migrator } from 'kysely/migration';
import type { DB } from '../schema.ts';

/** Kysely's lock id, so that a store migrated by an older chessport is locked by the same key. */
const MIGRATION_LOCK_ID = sql.lit(BigInt('3853314791062309107'));

/** Kysely's PostgreSQL adapter, its migration lock held by the transaction it is taken in. */
class TransactionLockAdapter extends KyselyPostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(db);
  }

  override async releaseMigrationLock(): Promise<void> {}
}

/** Kysely's PostgreSQL dialect, with the migration lock above. */
export class ChessportPostgresDialect extends PostgresDialect {
  override createAdapter(): KyselyPostgresAdapter {
    return new TransactionLockAdapter();
  }
}

/** A migration that failed, carried out of the transaction so that it rolls back. */
class FailedMigrations extends Error {
  readonly result: MigrationResultSet;
  constructor(result: MigrationResultSet) {
    super('a migration failed');
    this.result = result;
  }
}

/**
 * Applies the pending migrations in one transaction that first takes the lock: the others wait for it, then
 * find none pending. They wait as long as it takes, whatever timeouts the role has (set_config(..., true):
 * for this transaction only). A failed migration rolls the whole transaction back.
 */
export async function migrateUnderLock(
  db: Kysely<DB>,
  provider: MigrationProvider,
): Promise<MigrationResultSet> {
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`select set_config('lock_timeout', '0', true), set_config('statement_timeout', '0', true)`.execute(
        trx,
      );
      // Before the Migrator makes its tables: two first starts on an empty database would both create them.
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx);
      const result = await new Migrator({ db: trx, provider }).migrateToLatest();
      if (result.error !== undefined) throw new FailedMigrations(result);
      return result;
    });
  } catch (error) {
    if (error instanceof FailedMigrations) return error.result;
    throw error;
  }
}
