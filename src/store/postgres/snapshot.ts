// A snapshot on PostgreSQL (DialectAdapter.openSnapshot): a REPEATABLE READ, READ ONLY transaction on a
// connection of its own, outside the pools, to the primary or to a replica (postgres/replicas.ts).
import type { Kysely } from 'kysely';
import type { StoreSnapshot } from '../adapter.ts';
import type { DB } from '../schema.ts';

/** A snapshot on a new connection that `own` opens (with its pool's settings); `end` closes it. */
export async function openPostgresSnapshot(own: () => Kysely<DB>): Promise<StoreSnapshot> {
  const db = own();
  try {
    // The snapshot is taken at the transaction's first statement.
    const trx = await db
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
      await db.destroy();
    };
    return { db: trx, end: () => (ended ??= end()) };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
