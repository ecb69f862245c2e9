// The change sequence values and change times that writes give the games they write (docs/design.md 18): one
// module for Store.write and for the migrations that write changes, so that both keep the order Store.write
// explains (per owner, seq order is commit order, and the change time never goes backwards).
//
// Raw SQL rather than Kysely's typed builder: the migrations run on a Kysely<unknown> (their tables are the
// ones of their time), Store.write on a Kysely<DB>, and a statement runs on either.
import { type QueryExecutorProvider, sql } from 'kysely';
import type { Dialect } from './types.ts';

/**
 * PostgreSQL: the channel every write transaction notifies, its owner's id the payload
 * (postgres/change-listener.ts listens).
 */
export const CHANGE_CHANNEL = 'chessport_changes';

/** The change sequence values and change time a write takes for the games it writes (Store.write). */
export interface ChangeAllocation {
  /** n values, increasing (consecutive on SQLite, maybe with gaps on PostgreSQL). */
  seqs: number[];
  /** The change time: the updatedAt of every game written by the transaction. */
  now: number;
}

export interface Changes {
  take(n: number): Promise<ChangeAllocation>;
}

/**
 * The changes of one write transaction on the owner's data, begun as its first statement (Store.write).
 * PostgreSQL: locks the owner's feed head until the transaction ends, and takes the change time under that
 * lock. SQLite: the transaction holds the store's write lock already; the change time is taken at the first
 * take(), from the `change_time` row.
 */
export async function beginChanges(
  trx: QueryExecutorProvider,
  dialect: Dialect,
  ownerId: string,
): Promise<Changes> {
  if (dialect === 'postgres') {
    const now = await lockOwner(trx, ownerId);
    return { take: async (n) => ({ seqs: await takePostgresSeqs(trx, n), now }) };
  }
  let now: number | undefined;
  return {
    take: async (n) => {
      const seqs = await takeSqliteSeqs(trx, n);
      now ??= await sqliteChangeTime(trx);
      return { seqs, now };
    },
  };
}

/**
 * A migration's changes, one game at a time, as Store.write takes them for a write of the game's owner.
 * PostgreSQL: each game locks its owner's feed head (held until the migration's transaction ends) and moves
 * the owner's change time on. SQLite: the migration is one transaction, with one change time.
 */
export function migrationChanges(
  db: QueryExecutorProvider,
  dialect: Dialect,
): (ownerId: string) => Promise<{ seq: number; now: number }> {
  let sqlite: Changes | undefined;
  return async (ownerId) => {
    if (dialect === 'sqlite') sqlite ??= await beginChanges(db, dialect, ownerId);
    const changes = sqlite ?? (await beginChanges(db, dialect, ownerId));
    const { seqs, now } = await changes.take(1);
    return { seq: seqs[0] as number, now };
  };
}

/** The highest change sequence value taken so far (on PostgreSQL possibly not committed yet). */
export async function lastSeq(db: QueryExecutorProvider, dialect: Dialect): Promise<number> {
  if (dialect === 'postgres') {
    const { rows } = await sql<{ value: number }>`
      select coalesce(pg_sequence_last_value('change_seq'), 0) as value`.execute(db);
    return Number(rows[0]?.value ?? 0);
  }
  const { rows } = await sql<{ value: number }>`select value from sequences where name = 'change'`.execute(
    db,
  );
  return Number(sqliteSequence(rows).value);
}

/**
 * PostgreSQL: locks the owner's feed head until the transaction ends (see Store.write) and moves its change
 * time to now, unless that is earlier. The first write of an owner inserts the row; a concurrent first
 * write waits on the inserted key like on the row lock (INSERT ... ON CONFLICT DO UPDATE). The same
 * statement NOTIFYs the owner's id to every process that listens (postgres/change-listener.ts): PostgreSQL
 * delivers it when the transaction commits, and drops it when it rolls back.
 */
async function lockOwner(trx: QueryExecutorProvider, ownerId: string): Promise<number> {
  const { rows } = await sql<{ change_time: number }>`
    insert into feed_heads (user_id, change_time) values (${ownerId}, ${Date.now()})
    on conflict (user_id) do update set change_time = greatest(feed_heads.change_time, excluded.change_time)
    returning change_time, pg_notify(${CHANGE_CHANNEL}, user_id)`.execute(trx);
  return Number(rows[0]?.change_time);
}

/** PostgreSQL: n values of `change_seq`, in increasing order. Only while holding the owner's lock. */
async function takePostgresSeqs(trx: QueryExecutorProvider, n: number): Promise<number[]> {
  if (n === 0) return [];
  const { rows } = await sql<{ seq: number }>`
    select nextval('change_seq') as seq from generate_series(1, ${n}::integer) order by seq`.execute(trx);
  return rows.map((row) => Number(row.seq));
}

/** SQLite: n consecutive seqs from the `change` row, inside the write transaction. */
async function takeSqliteSeqs(trx: QueryExecutorProvider, n: number): Promise<number[]> {
  const { rows } = await sql<{ value: number }>`
    update sequences set value = value + ${n} where name = 'change' returning value`.execute(trx);
  const first = Number(sqliteSequence(rows).value) - n + 1;
  return Array.from({ length: n }, (_, i) => first + i);
}

/** SQLite: the change time, now unless the store's latest change time is later. */
async function sqliteChangeTime(trx: QueryExecutorProvider): Promise<number> {
  const now = Date.now();
  const { rows } = await sql<{ value: number }>`
    update sequences set value = max(value, ${now}) where name = 'change_time' returning value`.execute(trx);
  if (rows[0]) return Number(rows[0].value);
  // First write on this store: start from the latest time already in it (one scan, once).
  const latest = await sql<{ t: number | null }>`select max(updated_at) as t from games`.execute(trx);
  const time = Math.max(now, Number(latest.rows[0]?.t ?? 0));
  await sql`insert into sequences (name, value) values ('change_time', ${time})`.execute(trx);
  return time;
}

/** SQLite: the `change` row of `sequences`, which migration 0001 creates. */
function sqliteSequence(rows: { value: number }[]): { value: number } {
  const row = rows[0];
  if (!row) throw new Error('the store has no change sequence');
  return row;
}
