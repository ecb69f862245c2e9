// 0002, PostgreSQL only: the change sequence becomes a PostgreSQL sequence, and each user who writes gets a
// feed head (StoreContext.write explains both); text keys sort by their bytes, as on SQLite. SQLite keeps the
// `sequences` rows of 0001.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await { sqlite: async () => {}, postgres: postgresFeed }[dialect](db);
}

async function postgresFeed(db: Kysely<unknown>): Promise<void> {
  // CACHE 1 (the default, spelled out): with a per-session cache a later nextval in another session
  // can return a smaller value, and the feed needs values that rise in the order they are taken.
  await sql`create sequence change_seq as bigint cache 1`.execute(db);
  await sql`select setval('change_seq', value) from sequences where name = 'change' and value > 0`.execute(
    db,
  );
  // A row per user who ever wrote: its row lock serialises that user's writers; it keeps their change time.
  await db.schema
    .createTable('feed_heads')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
    .addColumn('change_time', 'bigint', (c) => c.notNull())
    .execute();
  await sql`
    insert into feed_heads (user_id, change_time)
    select owner_id, max(updated_at) from games group by owner_id`.execute(db);
  await sql`delete from sequences where name in ('change', 'change_time')`.execute(db);
  // SQLite compares and sorts text by its bytes (BINARY). The "C" collation does the same on
  // PostgreSQL, whatever the database's default locale, so ties in list order break the same way
  // (games.database_id follows databases.id, the key it references).
  for (const [table, column] of [
    ['users', 'login'],
    ['apps', 'name'],
    ['tokens', 'id'],
    ['databases', 'id'],
    ['games', 'database_id'],
  ] as const) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type text collate "C"`.execute(
      db,
    );
  }
}
