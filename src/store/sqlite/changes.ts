// SQLite: the change sequence values and change times of write transactions (change-allocation.ts). The
// transaction begins IMMEDIATE and so holds the store's one write lock (sqlite/adapter.ts): the seqs come
// from the `change` row of `sequences` inside it, and the change time from the `change_time` row.
//
// Raw SQL rather than Kysely's typed builder: the migrations run on a Kysely<unknown> (their tables are the
// ones of their time), the store's writes on a Kysely<DB>, and a statement runs on either.
import { type QueryExecutorProvider, sql } from 'kysely';
import type { Changes, MigrationChanges } from '../change-allocation.ts';

/** The changes of one write transaction; the change time is taken at the first take(). */
export async function beginSqliteChanges(trx: QueryExecutorProvider): Promise<Changes> {
  let now: number | undefined;
  return {
    take: async (n) => {
      const seqs = await takeSeqs(trx, n);
      now ??= await changeTime(trx);
      return { seqs, now };
    },
  };
}

/** A migration's changes: the migration is one transaction, with one change time. */
export function sqliteMigrationChanges(db: QueryExecutorProvider): MigrationChanges {
  const changes = beginSqliteChanges(db);
  return async () => {
    const { seqs, now } = await (await changes).take(1);
    return { seq: seqs[0] as number, now };
  };
}

/** The highest change sequence value taken so far. */
export async function sqliteLastSeq(db: QueryExecutorProvider): Promise<number> {
  const { rows } = await sql<{ value: number }>`select value from sequences where name = 'change'`.execute(
    db,
  );
  return Number(sequence(rows).value);
}

/** n consecutive seqs from the `change` row, inside the write transaction. */
async function takeSeqs(trx: QueryExecutorProvider, n: number): Promise<number[]> {
  const { rows } = await sql<{ value: number }>`
    update sequences set value = value + ${n} where name = 'change' returning value`.execute(trx);
  const first = Number(sequence(rows).value) - n + 1;
  return Array.from({ length: n }, (_, i) => first + i);
}

/** The change time, now unless the store's latest change time is later. */
async function changeTime(trx: QueryExecutorProvider): Promise<number> {
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

/** The `change` row of `sequences`, which migration 0001 creates. */
function sequence(rows: { value: number }[]): { value: number } {
  const row = rows[0];
  if (!row) throw new Error('the store has no change sequence');
  return row;
}
