// Brings a store to this version's schema when it opens: the pending migrations, applied once however many
// processes open the store at the same time, and a refusal of a store that a newer version has upgraded.
import { type Kysely, sql } from 'kysely';
import type { MigrationProvider, MigrationResultSet } from 'kysely/migration';
import type { DialectAdapter } from '../adapter.ts';
import { MigrationFailure } from '../errors.ts';
import type { DB } from '../schema.ts';
import { migrationProvider } from './index.ts';

/** Applies the pending migrations; returns their names, in order (none when the store was up to date). */
export async function migrate(
  db: Kysely<DB>,
  adapter: Pick<DialectAdapter, 'name' | 'applyMigrations'>,
): Promise<string[]> {
  // Several instances may start at once on one store: the adapter applies the pending migrations under a
  // lock, so that one applies them and the others then find none.
  const provider = migrationProvider(adapter.name);
  const newer = await newerMigrations(db, provider).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const { error, results }: MigrationResultSet =
    newer.length > 0
      ? { error: new Error(newerVersion(newer)) }
      : await adapter.applyMigrations(db, provider);
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
