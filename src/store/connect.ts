// Opens the store named by a DATABASE_URL: a SQLite file path (default) or, later, a postgres:// URL.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import { type Dialect, migrationProvider } from './migrations.ts';
import type { DB } from './schema.ts';
import { Store } from './store.ts';

export const DEFAULT_DATABASE_URL = 'data/chessport.sqlite';

export interface OpenOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
}

export async function openStore(
  url: string = DEFAULT_DATABASE_URL,
  options: OpenOptions = {},
): Promise<Store> {
  if (/^postgres(ql)?:\/\//.test(url)) {
    throw new Error('PostgreSQL stores are not supported yet: set DATABASE_URL to a SQLite file path');
  }
  const dialect: Dialect = 'sqlite';
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // WAL lets the CLI import while the server reads; a busy timeout makes concurrent writers queue, not fail.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  if (options.migrate !== false) await migrate(db, dialect);
  return new Store(db, dialect);
}

async function migrate(db: Kysely<DB>, dialect: Dialect): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await db.destroy();
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName);
    throw new Error(`store migration failed: ${reason}`);
  }
}
