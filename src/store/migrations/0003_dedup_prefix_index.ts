// 0003: the dedup index holds 8 characters of the database id and 12 of the content hash (48 bits) instead of
// both whole (about 110 bytes an entry). An index that takes its keys at random has most of its pages
// rewritten by each import commit; this one has a quarter of the pages. Lookups compare the whole hash on
// the rows it finds. (They must repeat these expressions verbatim, or the index goes unused: 0004 makes the
// key a column.)
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index games_dedup on games (substr(database_id, 1, 8), substr(content_hash, 1, 12))`.execute(
    db,
  );
  await db.schema.dropIndex('games_database_hash').execute();
}
