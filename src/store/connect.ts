// Opens the store named by a DATABASE_URL: a SQLite file path (default) or a postgres:// URL. The URL chooses
// the dialect's adapter once (sqlite/open.ts, postgres/open.ts); nothing after asks which it is.
import type { PoolMode } from './adapter.ts';
import { StoreContext } from './context.ts';
import { openPostgres } from './postgres/open.ts';
import { openSqlite } from './sqlite/open.ts';
import { Store } from './store.ts';

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
  /**
   * PostgreSQL only: the URL of the connection that LISTENs for other processes' commits (default: the
   * store's URL). Through a pooler in transaction mode it must reach PostgreSQL directly (or a pooler in
   * session mode): LISTEN holds its session.
   */
  listenUrl?: string;
  /** PostgreSQL only: the pool mode of a pooler between this process and PostgreSQL (default session). */
  poolMode?: PoolMode;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export async function openStore(
  url: string = DEFAULT_DATABASE_URL,
  options: OpenOptions = {},
): Promise<Store> {
  const open = isPostgresUrl(url) ? openPostgres : openSqlite;
  const opened = await open(url, {
    migrate: options.migrate !== false,
    poolMax: options.poolMax ?? DEFAULT_POOL_MAX,
    lockTimeoutMs: options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS,
    listenUrl: options.listenUrl,
    poolMode: options.poolMode ?? 'session',
  });
  return new Store(new StoreContext(opened), opened.applied);
}
