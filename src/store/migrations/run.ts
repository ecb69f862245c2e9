// Brings a store to this version's schema when it opens: the pending migrations, applied once however many
// processes open the store at the same time, and a refusal of a store that a newer version has upgraded.
import { type Kysely, sql } from 'kysely';
import { type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import { MigrationFailure } from '../errors.ts';
import type { DB } from '../schema.ts';
import type { Dialect } from '../types.ts';
import { migrationProvider } from './index.ts';

/** Applies the pending migrations; returns their names, in order (none when the store was up to date). */
export async function migrate(db: Kysely<DB>, dialect: Dialect): Promise<string[]> {
  // Several instances may start at once on one store. On PostgreSQL, Kysely's Migrator runs the pending
  // migrations under a session advisory lock (pg_advisory_lock), so one applies them and the others then
  // find none; on SQLite, migrateSqlite takes the lock.
  const provider = migrationProvider(dialect);
  const newer = await newerMigrations(db, provider).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const { error, results }: MigrationResultSet =
    newer.length > 0
      ? { error: new Error(newerVersion(newer)) }
      : dialect === 'sqlite'
        ? await migrateSqlite(db, provider)
        : await new Migrator({ db, provider }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await db.destroy();
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    // The CLI prints a StoreError as a message, not a stack trace.
    throw new MigrationFailure(reason);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Migrations recorded in the store that this code does not have: a newer chessport has upgraded it. Such a
 * store must not be used: this code would write rows without what the newer schema expects. It is refused
 * in the same words on both dialects (Kysely's own check calls such a store "corrupted", and only on
 * PostgreSQL).
 */
async function newerMigrations(db: Kysely<DB>, provider: MigrationProvider): Promise<string[]> {
  const known = new Set(Object.keys(await provider.getMigrations()));
  const recorded = await sql<{ name: string }>`select name from kysely_migration`.execute(db).then(
    (result) => result.rows.map((row) => row.name),
    (error: unknown) => {
      // A new store has no migration table yet (SQLite's message, PostgreSQL's undefined_table).
      if (/no such table/.test(String(error)) || (error as { code?: unknown }).code === '42P01') return [];
      throw error;
    },
  );
  return recorded.filter((name) => !known.has(name)).sort();
}

function newerVersion(newer: string[]): string {
  return (
    `a newer version of chessport has upgraded it (migration ${newer.join(', ')}, unknown to this one): ` +
    'run that version or a later one (`chessport --version` says which one this is)'
  );
}

/**
 * Kysely takes no lock for SQLite migrations (it expects one process), so two processes opening a fresh
 * store at once (a CLI command and the server) would both create the tables, and one would fail. Pending
 * migrations therefore run inside BEGIN IMMEDIATE: a second process waits for the first one's commit
 * (busy_timeout) and then finds nothing left to do. A store that is up to date takes no write lock.
 */
async function migrateSqlite(db: Kysely<DB>, provider: MigrationProvider): Promise<MigrationResultSet> {
  const migrations = await new Migrator({ db, provider }).getMigrations();
  if (migrations.every((m) => m.executedAt !== undefined)) return { results: [] };
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    let outcome = await new Migrator({ db: conn, provider, disableTransactions: true }).migrateToLatest();
    if (!outcome.error) {
      await sql`commit`.execute(conn).catch((error: unknown) => {
        outcome = { ...outcome, error };
      });
    }
    // A full disk or an I/O error has SQLite roll back by itself; the ROLLBACK's "no transaction is active"
    // must not replace the migration's own error.
    if (outcome.error) await sql`rollback`.execute(conn).catch(() => undefined);
    return outcome;
  });
}
