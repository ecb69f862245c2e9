// The change sequence values and change times of the migrations that write changes (0006, 0008), as the
// store's writes take them (change-allocation.ts), so that their changes keep the feed's order too.
import type { QueryExecutorProvider } from 'kysely';
import type { MigrationChanges } from '../change-allocation.ts';
import { postgresMigrationChanges } from '../postgres/changes.ts';
import { sqliteMigrationChanges } from '../sqlite/changes.ts';
import type { Dialect } from '../types.ts';

/** A migration's changes on this dialect, one game at a time, each under its owner's order. */
export function migrationChanges(db: QueryExecutorProvider, dialect: Dialect): MigrationChanges {
  return { sqlite: sqliteMigrationChanges, postgres: postgresMigrationChanges }[dialect](db);
}
