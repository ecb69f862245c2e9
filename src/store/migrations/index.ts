// Versioned migrations, one file each, applied in name order on every start. Never edit one that has shipped:
// add a new one. Each store records the names of those applied in its kysely_migration table, so a name never
// changes.
import type { Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import type { Dialect } from '../types.ts';
import { up as initial } from './0001_initial.ts';
import { up as postgresFeed } from './0002_postgres_feed.ts';
import { up as dedupPrefixIndex } from './0003_dedup_prefix_index.ts';
import { up as dedupKeyColumn } from './0004_dedup_key_column.ts';
import { up as sqliteGameKeys } from './0005_sqlite_game_keys.ts';
import { up as exportResult } from './0006_export_result.ts';
import { up as databaseGamesSeq } from './0007_database_games_seq.ts';
import { up as escapeLinesAndHalfmoveClock } from './0008_escape_lines_and_halfmove_clock.ts';
import { up as oauth } from './0009_oauth.ts';
import { up as webhooks } from './0010_webhooks.ts';
import { up as databaseGameCount } from './0011_database_game_count.ts';
import { up as oauthRecordUser } from './0012_oauth_record_user.ts';
import { up as developerConsole } from './0013_developer_console.ts';
import { up as webhookEvents } from './0014_webhook_events.ts';
import { up as gameFilterIndexes } from './0015_game_filter_indexes.ts';
import { up as gamesChangedIndex } from './0016_games_changed_index.ts';

/** A migration's work: Kysely's schema builder is untyped by design (its tables are not there yet). */
type Up = (db: Kysely<unknown>, dialect: Dialect) => Promise<void>;

/** Every migration by its name, which is also its file's. */
const MIGRATIONS: Record<string, Up> = {
  '0001_initial': initial,
  '0002_postgres_feed': postgresFeed,
  '0003_dedup_prefix_index': dedupPrefixIndex,
  '0004_dedup_key_column': dedupKeyColumn,
  '0005_sqlite_game_keys': sqliteGameKeys,
  '0006_export_result': exportResult,
  '0007_database_games_seq': databaseGamesSeq,
  '0008_escape_lines_and_halfmove_clock': escapeLinesAndHalfmoveClock,
  '0009_oauth': oauth,
  '0010_webhooks': webhooks,
  '0011_database_game_count': databaseGameCount,
  '0012_oauth_record_user': oauthRecordUser,
  '0013_developer_console': developerConsole,
  '0014_webhook_events': webhookEvents,
  '0015_game_filter_indexes': gameFilterIndexes,
  '0016_games_changed_index': gamesChangedIndex,
};

/** The migrations for Kysely's Migrator, which applies the pending ones in name order. */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  const migrations = Object.fromEntries(
    Object.entries(MIGRATIONS).map(([name, up]): [string, Migration] => [
      name,
      { up: (db) => up(db, dialect) },
    ]),
  );
  return { getMigrations: async () => migrations };
}
