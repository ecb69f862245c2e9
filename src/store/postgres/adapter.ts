// The PostgreSQL side of the store's differences (adapter.ts): a pool of connections whose write transactions
// run at once, ordered per owner by the lock on the owner's feed head (changes.ts), and can be dropped when
// they go silent.
import { type Compilable, type Kysely, type RawBuilder, sql, type UpdateObject } from 'kysely';
import type { MigrationProvider, MigrationResultSet } from 'kysely/migration';
import type { DialectAdapter, StoreSnapshot } from '../adapter.ts';
import { StoreError } from '../errors.ts';
import type { ReplicaSettings, Replicas } from '../read-routing.ts';
import type { DB } from '../schema.ts';
import type { BulkWrites } from '../types.ts';
import { beginPostgresChanges, postgresLastSeq } from './changes.ts';
import { dedupKey } from './dedup-key.ts';
import { insertPostgresBatch } from './game-insert.ts';
import { migrateUnderLock } from './migration-lock.ts';
import { type OpenPool, openPostgresReplicas } from './replicas.ts';
import type { Sessions } from './sessions.ts';
import { openPostgresSnapshot } from './snapshot.ts';
import type { PoolSockets } from './sockets.ts';

export class PostgresAdapter implements DialectAdapter {
  readonly name = 'postgres';
  private readonly sessions: Sessions;
  private readonly sockets: PoolSockets;
  /** Opens a pool like the primary's (open.ts), for each replica. */
  private readonly openPool: OpenPool;
  /** A Kysely instance on one connection of its own, outside the pool, with the pool's settings (open.ts). */
  private readonly ownConnection: () => Kysely<DB>;

  constructor(sessions: Sessions, sockets: PoolSockets, openPool: OpenPool, ownConnection: () => Kysely<DB>) {
    this.sessions = sessions;
    this.sockets = sockets;
    this.openPool = openPool;
    this.ownConnection = ownConnection;
  }

  async writeIfFree(db: Kysely<DB>, query: Compilable): Promise<boolean> {
    await db.executeQuery(query.compile());
    return true;
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
    return db.transaction().execute(async (trx) => {
      await this.sessions.begin(trx);
      return fn(trx);
    });
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
   * The pending migrations, in one transaction under a transaction-level advisory lock (migration-lock.ts):
   * one process applies them, and the others then find none, through a pooler in transaction mode too.
   */
  async applyMigrations(db: Kysely<DB>, provider: MigrationProvider): Promise<MigrationResultSet> {
    return migrateUnderLock(db, provider);
  }

  openReplicas(primary: Kysely<DB>, settings: ReplicaSettings): Promise<Replicas> {
    return openPostgresReplicas(primary, settings, this.openPool);
  }

  openSnapshot(): Promise<StoreSnapshot> {
    return openPostgresSnapshot(this.ownConnection);
  }
}
