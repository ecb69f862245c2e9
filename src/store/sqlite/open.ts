// Opens a SQLite store: its file (a new one private to its owner) with the connection settings every store
// uses, its adapter, its migrations, and the poller that hears other processes' commits.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { OpenedStore, OpenSettings } from '../adapter.ts';
import { ChangeSignals } from '../change-signals.ts';
import { migrate } from '../migrations/run.ts';
import type { DB } from '../schema.ts';
import { SqliteAdapter } from './adapter.ts';
import { SqliteChangePoller } from './change-poller.ts';
import { checkpointAtWalSize } from './checkpoints.ts';
import { sqliteRunner, withStatementCache } from './statements.ts';

/** The store at `url` (a file path, or `sqlite:` and one), its pending migrations applied unless told not to. */
export async function openSqlite(url: string, settings: OpenSettings): Promise<OpenedStore> {
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  if (file !== ':memory:') createPrivately(file);
  const sqlite = new SQLite(file);
  // 16 KB pages rather than 4 KB, for a new store (an existing one keeps its size): a fifth fewer pages to
  // write per game imported, and each commit's WAL frames carry a quarter as many page headers and
  // checksums. It must come before WAL mode, which fixes the page size.
  sqlite.pragma('page_size = 16384');
  // WAL lets the CLI import while the server reads; a busy timeout makes concurrent writers queue, not fail.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${Math.round(settings.lockTimeoutMs)}`);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Checkpoints (copying the WAL into the database, with two fsyncs) at 40 MB of WAL; an import moves them
  // to a thread of their own (checkpoints.ts). Readers do not wait either way.
  checkpointAtWalSize(sqlite);
  const statements = withStatementCache(sqlite);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
  // The import's insert path, the game-key log and the checkpoints work on the connection itself.
  const adapter = new SqliteAdapter(sqlite);
  const applied = settings.migrate ? await migrate(db, adapter) : [];
  return {
    db,
    adapter,
    // The hot reads skip Kysely's driver (statements.ts).
    reader: sqliteRunner(statements, sqlite),
    // An in-memory store has no other process to hear.
    signals: new ChangeSignals(sqlite.memory ? undefined : new SqliteChangePoller(db)),
    applied,
  };
}

/**
 * A new store's file (and folder) readable by its owner only, whatever the umask: it holds the server secret
 * that seals cursors and derives every app's user ids, the users' emails and every game. SQLite gives the
 * -wal and -shm files the database file's mode. An existing file keeps the mode the operator gave it.
 */
function createPrivately(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
