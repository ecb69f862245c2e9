// 0015: an index for each filter of the game lists and exports (issue 36, store/game-filter.ts), led by the
// owner so that a filter reads only its matches among the user's games, then by pk so that they come in list
// order. Not partial (WHERE deleted = 0): the store's statements bind deleted's value, and neither SQLite
// (statements are planned once, sqlite/statements.ts) nor PostgreSQL's generic plans could use them then.
// updatedSince needs none: it becomes a seq bound on the feed's (owner_id, seq) index.
import type { Kysely } from 'kysely';

/** The filtered columns, each with its index name. */
const FILTERED = {
  games_owner_white_name: 'white_name',
  games_owner_black_name: 'black_name',
  games_owner_white_fide_id: 'white_fide_id',
  games_owner_black_fide_id: 'black_fide_id',
  games_owner_date: 'date',
  games_owner_eco: 'eco',
  games_owner_event: 'event',
  games_owner_result: 'result',
} as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, column] of Object.entries(FILTERED)) {
    await db.schema.createIndex(name).on('games').columns(['owner_id', column, 'pk']).execute();
  }
}
