// Cheap version stamps for answers too large to hash (the streamed database PGN), read without their rows.
import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

/**
 * Identifies the content of a database's PGN export: the seq of the latest write to its games (an import,
 * an update, a move in or out, a deletion), which every such write records on the database row in its own
 * transaction (Store.write). Seqs are never reused, so two different contents never share a version. One
 * primary-key lookup, however many games the database or its owner has.
 */
export async function databaseVersion(db: Kysely<DB>, databaseId: string): Promise<number> {
  const row = await db
    .selectFrom('databases')
    .select('games_seq')
    .where('id', '=', databaseId)
    .executeTakeFirst();
  return Number(row?.games_seq ?? 0);
}
