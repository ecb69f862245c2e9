// The SQLite side of the store's differences (adapter.ts): one better-sqlite3 connection, whose write
// transactions take the store's one write lock as they begin, and whose import path, game-key log and
// checkpoints work on the connection directly.
import SQLite, { type Database as SqliteHandle } from 'better-sqlite3';
import { type Compilable, Kysely, type RawBuilder, SqliteDialect, sql, type UpdateObject } from 'kysely';
import { type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import type { DialectAdapter, StoreSnapshot } from '../adapter.ts';
import { StoreError } from '../errors.ts';
import { storeFault } from '../faults.ts';
import type { GameBatch } from '../game-insert.ts';
import type { Replicas } from '../read-routing.ts';
import type { DB } from '../schema.ts';
import type { BulkWrites, InsertOutcome } from '../types.ts';
import { beginSqliteChanges, sqliteLastSeq } from './changes.ts';
import { BackgroundCheckpoints } from './checkpoints.ts';
import { insertSqliteBatch } from './game-insert.ts';
import { logKeys } from './game-keys.ts';
import { withStatementCache } from './statements.ts';

export class SqliteAdapter implements DialectAdapter {
  readonly name = 'sqlite';
  /** The connection under the store's Kysely instance (open.ts): Kysely's SQLite dialect has one. */
  readonly handle: SqliteHandle;

  constructor(handle: SqliteHandle) {
    this.handle = handle;
  }

  async limitLockWaits(ms: number): Promise<void> {
    this.handle.pragma(`busy_timeout = ${ms}`);
  }

  dropSilentConnections(): void {}

  bulkWrites(): BulkWrites {
    // An in-memory store has no WAL to checkpoint.
    if (this.handle.memory) return { ready: async () => {}, committed: () => {}, end: async () => {} };
    return new BackgroundCheckpoints(this.handle);
  }

  async transaction<T>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    return db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      try {
        const result = await fn(conn);
        await sql`commit`.execute(conn);
        return result;
      } catch (error) {
        // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) make SQLite roll the transaction back
        // itself; a ROLLBACK then fails with "no transaction is active", which must not hide the cause.
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw error;
      }
    });
  }

  writeFailure(error: unknown): unknown {
    return error;
  }

  async writeIfFree(_db: Kysely<DB>, query: Compilable): Promise<boolean> {
    const { handle } = this;
    if (handle.inTransaction) return false;
    const { sql: text, parameters } = query.compile();
    const wait = Number(handle.pragma('busy_timeout', { simple: true }));
    handle.pragma('busy_timeout = 0');
    try {
      handle.prepare(text).run(...parameters);
      return true;
    } catch (error) {
      if (storeFault(error) === 'locked') return false;
      throw error;
    } finally {
      handle.pragma(`busy_timeout = ${wait}`);
    }
  }

  readonly beginChanges = beginSqliteChanges;

  readonly lastSeq = sqliteLastSeq;

  async insertBatch(batch: GameBatch): Promise<InsertOutcome> {
    return insertSqliteBatch(this.handle, batch);
  }

  gameKeyColumns(): UpdateObject<DB, 'games'> {
    return {};
  }

  logGameKey(databaseId: string, pk: number, contentHash: string): void {
    logKeys(this.handle, databaseId, pk, [contentHash]);
  }

  async forgetGameKeys(trx: Kysely<DB>, databaseId: string): Promise<void> {
    // Its game keys would find only tombstones now (the log's ids are AUTOINCREMENT, never reused).
    await trx.deleteFrom('game_keys').where('database_id', '=', databaseId).execute();
  }

  seqAt(seqs: readonly number[], n: RawBuilder<number>): RawBuilder<number> {
    // The values one write takes are consecutive.
    return sql<number>`${(seqs[0] ?? 1) - 1} + ${n}`;
  }

  lockRows<Q>(query: Q): Q {
    return query;
  }

  skipLocked(): RawBuilder<unknown> {
    return sql``;
  }

  /**
   * Kysely takes no lock for SQLite migrations (it expects one process), so two processes opening a fresh
   * store at once (a CLI command and the server) would both create the tables, and one would fail. Pending
   * migrations therefore run inside BEGIN IMMEDIATE: a second process waits for the first one's commit
   * (busy_timeout) and then finds nothing left to do. A store that is up to date takes no write lock.
   */
  async applyMigrations(db: Kysely<DB>, provider: MigrationProvider): Promise<MigrationResultSet> {
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

  async openReplicas(): Promise<Replicas> {
    throw new StoreError(
      'read replicas (DATABASE_REPLICA_URLS, REPLICA_MAX_LAG) are for a PostgreSQL store: this store is a ' +
        'SQLite file, which has no replicas; unset them, or move the store to PostgreSQL (docs/operations.md)',
    );
  }

  async openSnapshot(db: Kysely<DB>): Promise<StoreSnapshot> {
    if (this.handle.memory) return { db, end: async () => {} };
    const handle = new SQLite(this.handle.name, { readonly: true, fileMustExist: true });
    handle.pragma(`busy_timeout = ${Number(this.handle.pragma('busy_timeout', { simple: true }))}`);
    const own = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(handle) }) });
    let ended: Promise<void> | undefined;
    try {
      // Deferred: the read transaction, and with it the snapshot, begins at the first read.
      const trx = await own.startTransaction().execute();
      const end = async () => {
        await trx
          .commit()
          .execute()
          .catch(() => undefined);
        await own.destroy();
      };
      return { db: trx, end: () => (ended ??= end()) };
    } catch (error) {
      await own.destroy();
      throw error;
    }
  }
}
