// What differs between SQLite and PostgreSQL, behind one interface with an implementation per dialect
// (sqlite/adapter.ts, postgres/adapter.ts), chosen when the store opens (connect.ts). The resource modules
// ask the adapter where the dialects differ and never ask which dialect it is.
import type { Compilable, Kysely, QueryExecutorProvider, RawBuilder, UpdateObject } from 'kysely';
import type { MigrationProvider, MigrationResultSet } from 'kysely/migration';
import type { Changes } from './change-allocation.ts';
import type { ChangeSignals } from './change-signals.ts';
import type { GameBatch } from './game-insert.ts';
import type { RunQuery } from './prepared.ts';
import type { ReplicaSettings, Replicas } from './read-routing.ts';
import type { DB } from './schema.ts';
import type { BulkWrites, Dialect, InsertOutcome } from './types.ts';

/** The part of the adapter that the rest of the program uses, as `store.dialect`. */
export interface DialectSettings {
  readonly name: Dialect;
  /**
   * SQLite: from now on, a statement waits at most ms for a lock that another process holds (busy_timeout),
   * then fails as locked. For the server, which only reads: a WAL reader waits only for a process that holds
   * the store exclusively, and better-sqlite3 waits synchronously, stalling every request. PostgreSQL:
   * nothing (its lock_timeout is set on opening).
   */
  limitLockWaits(ms: number): Promise<void>;
  /**
   * PostgreSQL: from now on, a connection that gets no answer for ms is dropped, and its query fails as a
   * lost connection (postgres/sockets.ts). For the server, whose queries are short; not for a migration or
   * an import, whose statements may rightly run for minutes. SQLite: nothing.
   */
  dropSilentConnections(ms: number): void;
  /**
   * Prepares the store for a long run of imports' batches (`store.games.insert`). SQLite: checkpoints run on
   * a thread of their own meanwhile (sqlite/checkpoints.ts). PostgreSQL needs nothing.
   */
  bulkWrites(): BulkWrites;
}

/** Everything that differs between the dialects, for the store's own modules (StoreContext.adapter). */
export interface DialectAdapter extends DialectSettings {
  /**
   * Runs fn in a write transaction. SQLite: one that holds the store's write lock from its first statement
   * (BEGIN IMMEDIATE), so that a read in it sees what the write after it is based on. PostgreSQL: Kysely's
   * (READ COMMITTED, with the row locks its statements take).
   */
  transaction<T>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T>;
  /**
   * What a write transaction of the owner's games failed with, as the callers should see it: PostgreSQL's
   * refusal of text holding U+0000, which SQLite stores, becomes a StoreError; anything else stays as it is.
   */
  writeFailure(error: unknown): unknown;
  /**
   * Runs one write statement that may be skipped (a token's last use): at once, or not at all when another
   * writer holds the lock it needs; true when it ran. SQLite: busy_timeout 0 for that statement, run on the
   * connection synchronously (nothing else can run on it meanwhile), and skipped inside another's
   * transaction on it; a request never stalls the server waiting for an import's batch. PostgreSQL: run as
   * any statement (it waits only for the row's lock, at most lock_timeout).
   */
  writeIfFree(db: Kysely<DB>, query: Compilable): Promise<boolean>;
  /**
   * The change sequence values and change time of one write transaction on the owner's data, begun as its
   * first statement (StoreContext.write explains the order they keep). SQLite: the transaction holds the
   * store's write lock already. PostgreSQL: locks the owner's feed head until the transaction ends.
   */
  beginChanges(trx: QueryExecutorProvider, ownerId: string): Promise<Changes>;
  /** The highest change sequence value taken so far (on PostgreSQL possibly not committed yet). */
  lastSeq(db: QueryExecutorProvider): Promise<number>;
  /** Adds an import's batch to its database, within the caller's write transaction (game-insert.ts). */
  insertBatch(batch: GameBatch): Promise<InsertOutcome>;
  /**
   * The columns a games row takes beside its content when it holds this content in this database: its dedup
   * key on PostgreSQL (postgres/dedup-key.ts), none on SQLite, whose keys are a log of their own.
   */
  gameKeyColumns(databaseId: string, contentHash: string): UpdateObject<DB, 'games'>;
  /**
   * After a write gave the games row `pk` this content in this database, within its transaction: SQLite logs
   * the game's key (sqlite/game-keys.ts); PostgreSQL has it in the row already (gameKeyColumns).
   */
  logGameKey(databaseId: string, pk: number, contentHash: string): void;
  /** A database is deleted, within the transaction: SQLite drops its game keys; PostgreSQL has none apart. */
  forgetGameKeys(trx: Kysely<DB>, databaseId: string): Promise<void>;
  /** The n-th (from 1) of these values, increasing, that one write took, as SQL for one statement. */
  seqAt(seqs: readonly number[], n: RawBuilder<number>): RawBuilder<number>;
  /**
   * A read in a write transaction that decides what the transaction writes, with the rows it finds locked
   * until the transaction ends. PostgreSQL: FOR UPDATE. SQLite: the query as it is, since the transaction
   * holds the store's one write lock already.
   */
  lockRows<Q extends { forUpdate(): Q }>(query: Q): Q;
  /**
   * The end of a SELECT that claims rows for the transaction, skipping those another transaction claims:
   * FOR UPDATE (OF the alias `of`) SKIP LOCKED on PostgreSQL; nothing on SQLite, whose writers take turns.
   */
  skipLocked(of?: string): RawBuilder<unknown>;
  /** Applies the pending migrations, once however many processes open the store at the same time. */
  applyMigrations(db: Kysely<DB>, provider: MigrationProvider): Promise<MigrationResultSet>;
  /**
   * The streaming replicas the API's reads may go to, watched by a health check (read-routing.ts).
   * PostgreSQL: a pool per replica (postgres/replicas.ts). SQLite has one file and no replicas: refused.
   */
  openReplicas(primary: Kysely<DB>, settings: ReplicaSettings): Promise<Replicas>;
  /**
   * A read-only view of the store that stays as it is at its first statement, for a long read (an export)
   * that must see one state throughout, on a connection of its own so that every other request is served
   * meanwhile. SQLite: a deferred read transaction on a second connection to the file (WAL keeps its
   * pages; a checkpoint cannot pass it until it ends); an in-memory store, which no second connection can
   * open, reads on its one connection without isolation. PostgreSQL: a REPEATABLE READ, READ ONLY
   * transaction on a connection outside the pool, so that exports never take the pool's connections.
   */
  openSnapshot(db: Kysely<DB>): Promise<StoreSnapshot>;
}

/** A snapshot of the store (DialectAdapter.openSnapshot): its reads, until `end` releases it. */
export interface StoreSnapshot {
  db: Kysely<DB>;
  /** Ends the transaction and closes its connection; safe to call more than once. */
  end(): Promise<void>;
}

/** What the store is built of, as a dialect's open function (sqlite/open.ts, postgres/open.ts) makes it. */
export interface OpenedStore {
  db: Kysely<DB>;
  adapter: DialectAdapter;
  /** Where the compiled reads run (prepared.ts): the driver's path, or a faster one. */
  reader: RunQuery;
  signals: ChangeSignals;
  /** The migrations that opening the store applied, in order (Store.migrationsApplied). */
  applied: string[];
}

/** How to open the store, its settings resolved (connect.ts). */
export interface OpenSettings {
  migrate: boolean;
  poolMax: number;
  lockTimeoutMs: number;
  /** PostgreSQL: the URL of the LISTEN connection (DATABASE_LISTEN_URL), a direct one past any pooler. */
  listenUrl: string | undefined;
  /** PostgreSQL: how a pooler in front shares the server's connections (PG_POOL_MODE, connect.ts). */
  poolMode: PoolMode;
}

/**
 * `session`: each of the pool's connections is a session of its own (PostgreSQL itself, or a pooler in
 * session mode), which keeps its settings. `transaction`: a pooler (PgBouncer's pool_mode = transaction)
 * hands each transaction to any of its server connections, so nothing may outlive a transaction.
 */
export type PoolMode = 'session' | 'transaction';
