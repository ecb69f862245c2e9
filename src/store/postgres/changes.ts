// PostgreSQL: the change sequence values and change times of write transactions (change-allocation.ts).
// Transactions run at once and nextval() is not transactional, so the first statement of every write
// transaction locks the owner's feed head, and the owner's writers take their values one after another
// (StoreContext.write explains why that keeps seq order commit order).
//
// Raw SQL rather than Kysely's typed builder: the migrations run on a Kysely<unknown> (their tables are the
// ones of their time), the store's writes on a Kysely<DB>, and a statement runs on either.
import { type QueryExecutorProvider, sql } from 'kysely';
import type { Changes, MigrationChanges } from '../change-allocation.ts';

/**
 * The channel every write transaction notifies, its owner's id the payload (postgres/change-listener.ts
 * listens).
 */
export const CHANGE_CHANNEL = 'chessport_changes';

/** The changes of one write transaction: locks the owner's feed head and takes the change time under it. */
export async function beginPostgresChanges(trx: QueryExecutorProvider, ownerId: string): Promise<Changes> {
  const now = await lockOwner(trx, ownerId);
  return { take: async (n) => ({ seqs: await takeSeqs(trx, n), now }) };
}

/**
 * A migration's changes: each game locks its owner's feed head (held until the migration's transaction
 * ends) and moves the owner's change time on.
 */
export function postgresMigrationChanges(db: QueryExecutorProvider): MigrationChanges {
  return async (ownerId) => {
    const { seqs, now } = await (await beginPostgresChanges(db, ownerId)).take(1);
    return { seq: seqs[0] as number, now };
  };
}

/** The highest change sequence value taken so far, possibly not committed yet. */
export async function postgresLastSeq(db: QueryExecutorProvider): Promise<number> {
  const { rows } = await sql<{ value: number }>`
    select coalesce(pg_sequence_last_value('change_seq'), 0) as value`.execute(db);
  return Number(rows[0]?.value ?? 0);
}

/**
 * Locks the owner's feed head until the transaction ends and moves its change time to now, unless that is
 * earlier. The first write of an owner inserts the row; a concurrent first write waits on the inserted key
 * like on the row lock (INSERT ... ON CONFLICT DO UPDATE). The same statement NOTIFYs the owner's id to every
 * process that listens (change-listener.ts): PostgreSQL delivers it when the transaction commits, and drops
 * it when it rolls back.
 */
async function lockOwner(trx: QueryExecutorProvider, ownerId: string): Promise<number> {
  const { rows } = await sql<{ change_time: number }>`
    insert into feed_heads (user_id, change_time) values (${ownerId}, ${Date.now()})
    on conflict (user_id) do update set change_time = greatest(feed_heads.change_time, excluded.change_time)
    returning change_time, pg_notify(${CHANGE_CHANNEL}, user_id)`.execute(trx);
  return Number(rows[0]?.change_time);
}

/** n values of `change_seq`, in increasing order. Only while holding the owner's lock. */
async function takeSeqs(trx: QueryExecutorProvider, n: number): Promise<number[]> {
  if (n === 0) return [];
  const { rows } = await sql<{ seq: number }>`
    select nextval('change_seq') as seq from generate_series(1, ${n}::integer) order by seq`.execute(trx);
  return rows.map((row) => Number(row.seq));
}
