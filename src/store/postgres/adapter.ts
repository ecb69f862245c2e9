// The PostgreSQL side of the store's differences (adapter.ts): a pool of connections whose write transactions
// run at once, ordered per owner by the lock on the owner's feed head (changes.ts), and can be dropped when
// they go silent.
import { type Kysely, type RawBuilder, sql, type UpdateObject } from 'kysely';
import { type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';
import type { DialectAdapter, StoreSnapshot } from '../adapter.ts';
import { StoreError } from '../errors.ts';
import type { DB } from '../schema.ts';
import type { BulkWrites } from '../types.ts';
import { beginPostgresChanges, postgresLastSeq } from './changes.ts';
import { dedupKey } from './dedup-key.ts';
import { insertPostgresBatch } from './game-insert.ts';
import type { PoolSockets } from './sockets.ts';

/** Sets a setting of every connection of a pool: those open now, and those it opens later (open.ts). */
export interface Sessions {
  set(name: 'lock_timeout' | 'statement_timeout', ms: number): void;
}

export class PostgresAdapter implements DialectAdapter {
  readonly name = 'postgres';
  private readonly sessions: Sessions;
  private readonly sockets: PoolSockets;
  /** A Kysely instance on one connection of its own, outside the pool, with the pool's settings (open.ts). */
  private readonly ownConnection: () => Kysely<DB>;

  constructor(sessions: Sessions, sockets: PoolSockets, ownConnection: () => Kysely<DB>) {
    this.sessions = sessions;
    this.sockets = sockets;
    this.ownConnection = ownConnection;
  }

  async limitLockWaits(): Promise<void> {}

  dropSilentConnections(ms: number): void {
    this.sockets.limitSilence(ms);
    // PostgreSQL also cancels a statement itself, a little before its connection would be dropped as
    // silent. A query waiting for a lock (a table locked by a migration, VACUUM FULL or an operator) would
    // otherwise go on waiting in its backend after the drop: one backend more per request that meets the
    // lock, until the server's max_connections run out, for every client of it. Cancelled, the connection
    // serves on.
    this.sessions.set('statement_timeout', ms - Math.min(1000, ms / 10));
  }

  bulkWrites(): BulkWrites {
    return { ready: async () => {}, committed: () => {}, end: async () => {} };
  }

  async transaction<T>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    return db.transaction().execute(fn);
  }

  writeFailure(error: unknown): unknown {
    // SQLSTATE 22021: text holding U+0000, which PostgreSQL cannot store (SQLite can).
    if ((error as { code?: unknown }).code === '22021') {
      return new StoreError('the text holds a NUL character (U+0000), which PostgreSQL cannot store');
    }
    return error;
  }

  readonly beginChanges = beginPostgresChanges;

  readonly lastSeq = postgresLastSeq;

  readonly insertBatch = insertPostgresBatch;

  gameKeyColumns(databaseId: string, contentHash: string): UpdateObject<DB, 'games'> {
    return { dedup_key: dedupKey(databaseId, contentHash) };
  }

  logGameKey(): void {}

  async forgetGameKeys(): Promise<void> {}

  seqAt(seqs: readonly number[], n: RawBuilder<number>): RawBuilder<number> {
    // The values one write takes may have gaps: the statement gets them as an array.
    return sql<number>`(${seqs}::bigint[])[${n}]`;
  }

  lockRows<Q extends { forUpdate(): Q }>(query: Q): Q {
    return query.forUpdate();
  }

  skipLocked(of?: string): RawBuilder<unknown> {
    return of === undefined ? sql`for update skip locked` : sql`for update of ${sql.id(of)} skip locked`;
  }

  /**
   * Kysely's Migrator runs the pending migrations under a session advisory lock (pg_advisory_lock): one
   * process applies them, and the others then find none.
   */
  async applyMigrations(db: Kysely<DB>, provider: MigrationProvider): Promise<MigrationResultSet> {
    return new Migrator({ db, provider }).migrateToLatest();
  }

  async openSnapshot(): Promise<StoreSnapshot> {
    const own = this.ownConnection();
    try {
      // The snapshot is taken at the transaction's first statement.
      const trx = await own
        .startTransaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute();
      let ended: Promise<void> | undefined;
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
