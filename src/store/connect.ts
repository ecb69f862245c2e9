// Opens the store named by a DATABASE_URL: a SQLite file path (default) or a postgres:// URL.
import { ChangeSignals } from './change-signals.ts';
import { migrate } from './migrations/run.ts';
import { PostgresChangeListener } from './postgres/change-listener.ts';
import { checkEncoding, openPostgres } from './postgres/open.ts';
import { SqliteChangePoller } from './sqlite/change-poller.ts';
import { sqliteHandleOf } from './sqlite/handle.ts';
import { openSqlite } from './sqlite/open.ts';
import { Store } from './store.ts';
import type { Dialect } from './types.ts';

export const DEFAULT_DATABASE_URL = 'data/chessport.sqlite';
/** PostgreSQL connections per process when PG_POOL_MAX is not set. */
export const DEFAULT_POOL_MAX = 10;
/**
 * How long a statement waits for a lock that another process (SQLite) or session (PostgreSQL) holds, by
 * default, before it fails: the store's own writers hold one for a batch of an import (well under a second),
 * while an operator's session or a stuck transaction may never let go.
 */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

export interface OpenOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** PostgreSQL only: the most connections this process opens (default DEFAULT_POOL_MAX). */
  poolMax?: number;
  /**
   * How long a statement waits for another's lock (default DEFAULT_LOCK_TIMEOUT_MS): SQLite's busy timeout,
   * which the migrations' lock honours too; PostgreSQL's lock_timeout once the migrations are done (they wait
   * for each other as long as it takes).
   */
  lockTimeoutMs?: number;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export async function openStore(
  url: string = DEFAULT_DATABASE_URL,
  options: OpenOptions = {},
): Promise<Store> {
  const dialect: Dialect = isPostgresUrl(url) ? 'postgres' : 'sqlite';
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  if (dialect === 'sqlite') {
    const { db, run } = openSqlite(url, lockTimeoutMs);
    const applied = options.migrate !== false ? await migrate(db, dialect) : [];
    // An in-memory store has no other process to hear.
    const signals = new ChangeSignals(sqliteHandleOf(db)?.memory ? undefined : new SqliteChangePoller(db));
    return withApplied(new Store(db, dialect, run, undefined, signals), applied);
  }
  const { db, sessions, sockets } = await openPostgres(url, options.poolMax ?? DEFAULT_POOL_MAX);
  await checkEncoding(db).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const applied = options.migrate !== false ? await migrate(db, dialect) : [];
  // A lock held by another session (an operator's open transaction, a stuck client) would keep a statement
  // waiting, saying nothing, for as long as that session lives (`chessport games delete` on a row locked in
  // psql): it fails after the timeout instead (SQLSTATE 55P03), as on SQLite (busy_timeout).
  sessions.set('lock_timeout', lockTimeoutMs);
  const signals: ChangeSignals = new ChangeSignals(
    new PostgresChangeListener(url, (event) => signals.onSourceEvent(event)),
  );
  const store = new Store(
    db,
    dialect,
    undefined,
    (ms) => {
      sockets.limitSilence(ms);
      // PostgreSQL also cancels a statement itself, a little before its connection would be dropped as
      // silent. A query waiting for a lock (a table locked by a migration, VACUUM FULL or an operator) would
      // otherwise go on waiting in its backend after the drop: one backend more per request that meets the
      // lock, until the server's max_connections run out, for every client of it. Cancelled, the connection
      // serves on.
      sessions.set('statement_timeout', ms - Math.min(1000, ms / 10));
    },
    signals,
  );
  return withApplied(store, applied);
}

function withApplied(store: Store, applied: string[]): Store {
  store.migrationsApplied = applied;
  return store;
}
