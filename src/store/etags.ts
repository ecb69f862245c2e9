// Cheap version stamps for answers too large to hash (the streamed database PGN), read without their rows.
import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';
import { liveGameCount } from './store.ts';

export interface DatabaseVersion {
  /** Live games in the database. */
  games: number;
  /** Highest change sequence among the database's rows, tombstones included (0 when it never had one). */
  maxSeq: number;
}

/**
 * Identifies the content of a database's PGN export. Every write that adds, changes or deletes a game of
 * the database gives that row a new sequence value above all earlier ones (deleted games stay as
 * tombstones in it), so maxSeq rises; the only write that leaves maxSeq alone is moving a game out,
 * which lowers the count, and the count can only come back by a game entering, which raises maxSeq.
 * So two different contents never share a version.
 */
export async function databaseVersion(
  db: Kysely<DB>,
  ownerId: string,
  databaseId: string,
): Promise<DatabaseVersion> {
  const games = await liveGameCount(db, databaseId);
  // Walks the owner's (owner_id, seq) index from the top and stops at the first row of this database.
  const latest = await db
    .selectFrom('games')
    .select('seq')
    .where('owner_id', '=', ownerId)
    .where('database_id', '=', databaseId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { games, maxSeq: Number(latest?.seq ?? 0) };
}
