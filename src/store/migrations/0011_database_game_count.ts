// 0011: each database keeps the number of its live games (game_count), which every write to its games
// adjusts in its own transaction (game-writes.ts, the import's insert paths): /databases shows it as
// gameCount, and the game lists' X-Total-Count is one row (or the owner's few rows) read, where counting
// reads an index entry per game on every page (docs/performance.md). Filled here from the games.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = ({ sqlite: 'integer', postgres: 'bigint' } as const)[dialect];
  await db.schema
    .alterTable('databases')
    .addColumn('game_count', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update databases set game_count = (
      select count(*) from games where games.database_id = databases.id and games.deleted = 0
    )`.execute(db);
}
