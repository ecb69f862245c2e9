// 0007: every write to a database's games records its seq on the database (games_seq), which the PGN export's
// ETag is made of (Databases.version): one primary-key lookup, where the database's live-game count and its
// latest seq read index entries by the hundred thousand on every export, HEAD and If-None-Match. 0 stands for
// "no write since this migration": the tags of before it were made otherwise, and any later write sets a seq
// above 0 that no other write has.
import type { Kysely } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = ({ sqlite: 'integer', postgres: 'bigint' } as const)[dialect];
  await db.schema
    .alterTable('databases')
    .addColumn('games_seq', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
}
