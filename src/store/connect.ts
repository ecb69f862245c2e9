// Opens the store named by a DATABASE_URL: a SQLite file path (default) or a postgres:// URL.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import type { PoolClient } from 'pg';
import { StoreError } from './errors.ts';
import { migrationProvider } from './migrations/index.ts';
import { PoolSockets } from './postgres/sockets.ts';
import type { RunQuery } from './prepared.ts';
import type { DB } from './schema.ts';
import { checkpointAtWalSize } from './sqlite/checkpoints.ts';
import { registerSqliteHandle } from './sqlite/handle.ts';
import { sqliteRunner, withStatementCache } from './sqlite/statements.ts';
import { Store } from './store.ts';
import type { Dialect } from './types.ts';

export const DEFAULT_DATABASE_URL = 'data/chessport.sqlite';
/** PostgreSQL connections per process when PG_POOL_MAX is not set. */
export const DEFAULT_POOL_MAX = 10;
/** How long a query waits for a PostgreSQL connection (a free one in the pool, or a new one) before failing. */
const CONNECT_TIMEOUT_MS = 5000;
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
    return withApplied(new Store(db, dialect, run), applied);
  }
  const { db, sessions, sockets } = await openPostgres(url, options);
  await checkEncoding(db).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const applied = options.migrate !== false ? await migrate(db, dialect) : [];
  // A lock held by another session (an operator's open transaction, a stuck client) kept a statement waiting
  // for as long as that session lived, saying nothing: `chessport games delete` on a row locked in psql.
  // Now it fails after the timeout (SQLSTATE 55P03), as on SQLite (busy_timeout).
  sessions.set('lock_timeout', lockTimeoutMs);
  const store = new Store(db, dialect, undefined, (ms) => {
    sockets.limitSilence(ms);
    // PostgreSQL also cancels a statement itself, a little before its connection would be dropped as silent.
    // A query waiting for a lock (a table locked by a migration, VACUUM FULL or an operator) otherwise went
    // on waiting in its backend after the drop: one backend more per request that met the lock, until the
    // server's max_connections ran out, for every client of it. Cancelled, the connection serves on.
    sessions.set('statement_timeout', ms - Math.min(1000, ms / 10));
  });
  return withApplied(store, applied);
}

function withApplied(store: Store, applied: string[]): Store {
  store.migrationsApplied = applied;
  return store;
}

/** Sets a setting of every connection of a pool: those open now, and those it opens later. */
interface Sessions {
  set(name: 'lock_timeout' | 'statement_timeout', ms: number): void;
}

function openSqlite(url: string, lockTimeoutMs: number): { db: Kysely<DB>; run: RunQuery } {
  const file = url.replace(/^sqlite:(\/\/)?/, '');
  if (file !== ':memory:') createPrivately(file);
  const sqlite = new SQLite(file);
  // 16 KB pages rather than 4 KB, for a new store (an existing one keeps its size): a fifth fewer pages to
  // write per game imported, and each commit's WAL frames carry a quarter as many page headers and
  // checksums (measured on the import's inserts: 15.6 -> 10.5 us a game, commits 5.5 -> 2.1 us).
  // It must come before WAL mode, which fixes the page size.
  sqlite.pragma('page_size = 16384');
  // WAL lets the CLI import while the server reads; a busy timeout makes concurrent writers queue, not fail.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${Math.round(lockTimeoutMs)}`);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Checkpoints (copying the WAL into the database, with two fsyncs) at 40 MB of WAL; an import moves them
  // to a thread of their own (sqlite/checkpoints.ts). Readers do not wait either way.
  checkpointAtWalSize(sqlite);
  const statements = withStatementCache(sqlite);
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
  registerSqliteHandle(db, sqlite); // the import's insert path writes through it directly (sqlite/game-insert.ts)
  return { db, run: sqliteRunner(statements, sqlite) };
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

// int8 (bigint, count(*), row_number()) arrives from pg as a string by default, because it can exceed
// 2^53. Every int8 of this store is a millisecond time, a change sequence value, a row count or a pk, all
// far below 2^53 (9e15: 285,000 years of milliseconds), so they are parsed to plain numbers, like SQLite's.
const INT8_OID = 20;
const parseInt8 = (text: string) => Number(text);

async function openPostgres(
  url: string,
  options: OpenOptions,
): Promise<{ db: Kysely<DB>; sessions: Sessions; sockets: PoolSockets }> {
  // Loaded only here: a command on a SQLite store starts 20 ms sooner without it.
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID && format !== 'binary'
        ? parseInt8
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const sockets = new PoolSockets();
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? DEFAULT_POOL_MAX,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // TCP keepalive on each connection, so that one to a host that vanished is found dead and dropped.
    keepAlive: true,
    stream: sockets.create,
    types,
  });
  // A connection that the server or the network drops (restart, failover) emits 'error': on the pool while
  // idle, on the client itself while checked out between two queries. Unhandled, either would end the
  // process. The pool discards a broken connection (when idle, or when it comes back), and the next query
  // opens a new one or fails with an error that the API answers with 503.
  pool.on('error', () => undefined);
  const clients = new Set<PoolClient>();
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    clients.add(client);
    client.once('end', () => clients.delete(client));
  });
  const sessions: Sessions = {
    set(name, ms) {
      const value = Math.round(ms);
      pool.options[name] = value; // a start-up parameter of the connections to come
      // Those open now are idle (set while nothing else runs): the SET goes before their next query.
      for (const client of clients) client.query(`set ${name} = ${value}`).catch(() => undefined);
    },
  };
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), sessions, sockets };
}

/**
 * The store could not be brought to this version's schema (or a newer version has upgraded it). `reason` does
 * not name the store: the CLI names it as it shows it, its password masked.
 */
export class MigrationFailure extends StoreError {
  readonly reason: string;

  constructor(reason: string) {
    super(`cannot open the store: ${reason}`);
    this.reason = reason;
  }
}

/**
 * PostgreSQL: a database whose encoding cannot hold every character is refused before anything is written.
 * SQLite stores any text, and so must PostgreSQL: in a LATIN1 database `users add Émile` worked, but `李`
 * failed ("has no equivalent in encoding LATIN1"), and an import stopped part-way at the first game with
 * such a name. SQL_ASCII stores the bytes it is sent (the driver's UTF-8) unchanged, so it holds them too.
 */
async function checkEncoding(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ server_encoding: string }>`show server_encoding`.execute(db);
  const encoding = rows[0]?.server_encoding ?? '';
  if (encoding === 'UTF8' || encoding === 'SQL_ASCII') return;
  throw new MigrationFailure(
    `its database has the encoding ${encoding}, which cannot hold every text a PGN file may bring (player ` +
      'names in any script): use a UTF8 database (createdb -E UTF8 -T template0 <name>; pg_dump and ' +
      'pg_restore move an existing one into it)',
  );
}

/** Applies the pending migrations; returns their names, in order (none when the store was up to date). */
async function migrate(db: Kysely<DB>, dialect: Dialect): Promise<string[]> {
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
 * store must not be used: this code would write rows without what the newer schema expects. (The SQLite
 * path saw every migration it knew as done and started; Kysely's migrator refused on PostgreSQL, calling
 * the store "corrupted".)
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
