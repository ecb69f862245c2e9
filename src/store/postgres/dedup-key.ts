// PostgreSQL: the dedup key of a games row, what an import looks up to skip games the database already holds
// (SQLite logs its keys in game_keys instead: game-keys.ts).
import { sql } from 'kysely';

/** How much of the database id and of the content hash a game's dedup key keeps (migrations 0003, 0004). */
const DEDUP_DATABASE_CHARS = 8;
const DEDUP_HASH_CHARS = 12;

/**
 * The games_dedup_key index's key of a game (the dedup_key column): 8 characters of its database's id and
 * 12 of its content hash (48 bits), a small key for an index that takes its keys at random. Games with the
 * same key may still differ: the whole hash decides.
 */
export function dedupKey(databaseId: string, contentHash: string): string {
  return databaseId.slice(0, DEDUP_DATABASE_CHARS) + contentHash.slice(0, DEDUP_HASH_CHARS);
}

/** The dedup key of a games row as SQL, for a row that moves to the database `databaseId`. */
export function dedupKeySql(databaseId: string) {
  return sql<string>`${databaseId.slice(0, DEDUP_DATABASE_CHARS)} || substr(content_hash, 1, ${DEDUP_HASH_CHARS})`;
}
