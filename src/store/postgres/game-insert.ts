// PostgreSQL: an import batch's write, through Kysely. Games are looked up on the dedup index
// (games_dedup_key), and the rows written with one statement (game-rows.ts).
import type { Kysely } from 'kysely';
import { touchDatabase } from '../databases.ts';
import { contentColumns } from '../game-columns.ts';
import { gameId } from '../game-id.ts';
import { admit, type GameBatch } from '../game-insert.ts';
import type { DB, GameInsertRow } from '../schema.ts';
import type { GameRecord, InsertOutcome } from '../types.ts';
import { dedupKey } from './dedup-key.ts';
import { analyzeWhenStale, insertPostgresRows } from './game-rows.ts';

/** Adds the batch's games to the database within the caller's write transaction. */
export async function insertPostgresBatch(batch: GameBatch): Promise<InsertOutcome> {
  const { trx, database } = batch;
  await analyzeWhenStale(trx);
  const { fresh, duplicates, overLimit } = await admit(
    batch,
    (games) => existingHashes(trx, database.id, games),
    batch.liveCount,
  );
  if (fresh.length === 0) return { inserted: 0, duplicates, overLimit, ids: [] };
  const { rows, now } = await rowsOf(batch, fresh);
  await insertPostgresRows(trx, rows);
  await touchDatabase(trx, database.id, now, (rows.at(-1) as GameInsertRow).seq, rows.length);
  return { inserted: rows.length, duplicates, overLimit, ids: rows.map((r) => r.id) };
}

/** The content hashes of the games that the database holds among these. */
async function existingHashes(
  trx: Kysely<DB>,
  databaseId: string,
  games: GameRecord[],
): Promise<Set<string>> {
  const keys = [...new Set(games.map((g) => dedupKey(databaseId, g.contentHash)))];
  const existing = new Set<string>();
  for (let i = 0; i < keys.length; i += 500) {
    // The rows found share a dedup key with a game of the batch; the whole hash decides. The rows are
    // found by key alone, in a MATERIALIZED CTE that the planner cannot merge with the database's
    // condition: given both, it takes games_database_list whenever it believes the database small (stale
    // statistics), and reads every row of the database for each lookup.
    const rows = await trx
      .with(
        (cte) => cte('found').materialized(),
        (db) =>
          db
            .selectFrom('games')
            .select(['content_hash', 'database_id', 'deleted'])
            .where('dedup_key', 'in', keys.slice(i, i + 500)),
      )
      .selectFrom('found')
      .select('content_hash')
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .execute();
    for (const row of rows) existing.add(row.content_hash);
  }
  return existing;
}

async function rowsOf(
  batch: GameBatch,
  fresh: GameRecord[],
): Promise<{ rows: GameInsertRow[]; now: number }> {
  const { database } = batch;
  const { seqs, now } = await batch.take(fresh.length);
  const rows = fresh.map((game, i): GameInsertRow => {
    const id = gameId();
    return {
      id,
      owner_id: database.ownerId,
      database_id: database.id,
      seq: seqs[i] as number,
      ...contentColumns(game, id),
      dedup_key: dedupKey(database.id, game.contentHash),
      created_at: now,
      updated_at: now,
      deleted: 0,
    };
  });
  return { rows, now };
}
