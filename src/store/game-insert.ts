// The write path of an import batch (`store.games.insert`): skip games already in the database, keep within
// maxGames, take one change-sequence range, insert the rows. What both dialects do is here; each looks games
// up and writes rows its own way (sqlite/game-insert.ts, postgres/game-insert.ts), behind the adapter's
// insertBatch.
import type { Kysely } from 'kysely';
import type { ChangeAllocation } from './change-allocation.ts';
import type { DB } from './schema.ts';
import type { Database, GameRecord, InsertOutcome } from './types.ts';

export interface GameBatch {
  /** The write transaction (StoreContext.write). */
  trx: Kysely<DB>;
  database: Database;
  games: GameRecord[];
  allowDuplicates: boolean;
  /** n change sequence values and the change time, from the transaction. */
  take: (n: number) => Promise<ChangeAllocation>;
  /** The database's live games, counted in the transaction (SQLite counts with a statement of its own). */
  liveCount: () => Promise<number>;
}

/** The games of a batch to insert, and how many it leaves out. */
export type Admitted = Pick<InsertOutcome, 'duplicates' | 'overLimit'> & { fresh: GameRecord[] };

/**
 * The games of the batch to insert: unless allowDuplicates, none whose content the database holds
 * (`existing` returns those of the games given) nor one earlier in the batch; and only as many as fit under
 * maxGames beside the database's `liveCount()` live games.
 */
export async function admit(
  batch: GameBatch,
  existing: (games: GameRecord[]) => Set<string> | Promise<Set<string>>,
  liveCount: () => number | Promise<number>,
): Promise<Admitted> {
  let fresh = batch.games;
  if (!batch.allowDuplicates) {
    const known = await existing(fresh);
    const seen = new Set<string>();
    fresh = fresh.filter((g) => {
      if (seen.has(g.contentHash) || known.has(g.contentHash)) return false;
      seen.add(g.contentHash);
      return true;
    });
  }
  const duplicates = batch.games.length - fresh.length;
  let overLimit = 0;
  const { maxGames } = batch.database;
  if (maxGames !== null) {
    const room = Math.max(0, maxGames - (await liveCount()));
    overLimit = Math.max(0, fresh.length - room);
    fresh = fresh.slice(0, room);
  }
  return { fresh, duplicates, overLimit };
}
