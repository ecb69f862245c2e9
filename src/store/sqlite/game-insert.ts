// SQLite: an import batch's write on the better-sqlite3 handle itself, with statements prepared once per
// store (the INSERTs in game-rows.ts): building Kysely's multi-row INSERT (27 columns x 200 rows) and its
// dedup query costs more CPU than SQLite's writes. It still runs inside the write transaction
// (StoreContext.write; handle.ts). Its dedup check looks games up by key in memory, from the game_keys log
// (game-keys.ts).
import type { Database as SqliteHandle, Statement } from 'better-sqlite3';
import { gameId } from '../game-id.ts';
import { admit, type GameBatch } from '../game-insert.ts';
import type { GameRecord, InsertOutcome } from '../types.ts';
import { gameKey, knownKeys, logKeys } from './game-keys.ts';
import { insertGameRows } from './game-rows.ts';
import { perConnection } from './handle.ts';

interface SqliteStatements {
  existing: Statement<[string, string], string>;
  count: Statement<[string], number>;
  touch: Statement<[number, number, number, string]>;
}

const statementsOf = perConnection(
  (handle): SqliteStatements => ({
    existing: handle
      .prepare<[string, string], string>(
        // The rows that the game keys found (pks as a JSON array), whichever are still the database's.
        `select content_hash from games
            where pk in (select value from json_each(?)) and database_id = ? and deleted = 0`,
      )
      .pluck(),
    count: handle
      .prepare<[string], number>('select count(*) from games where database_id = ? and deleted = 0')
      .pluck(),
    touch: handle.prepare<[number, number, number, string]>(
      'update databases set updated_at = ?, games_seq = ?, game_count = game_count + ? where id = ?',
    ),
  }),
);

/** Adds the batch's games to the database, within the caller's write transaction (on this connection). */
export async function insertSqliteBatch(handle: SqliteHandle, batch: GameBatch): Promise<InsertOutcome> {
  const { database } = batch;
  const statements = statementsOf(handle);
  const existing = (games: GameRecord[]) => {
    const known = knownKeys(handle, database.id);
    const found: number[] = [];
    for (const game of games) known.find(gameKey(game.contentHash), found);
    // The rows found share a key with a game of the batch; the whole hash decides.
    return new Set(found.length > 0 ? statements.existing.all(JSON.stringify(found), database.id) : []);
  };
  const { fresh, duplicates, overLimit } = await admit(
    batch,
    existing,
    () => statements.count.get(database.id) ?? 0,
  );
  if (fresh.length === 0) return { inserted: 0, duplicates, overLimit, ids: [] };
  const { seqs, now } = await batch.take(fresh.length);
  const ids = fresh.map(() => gameId());
  const firstSeq = seqs[0] as number;
  // The row writer numbers the rows from the first seq (game-rows.ts): take() gives consecutive ones.
  if (seqs.at(-1) !== firstSeq + fresh.length - 1) throw new Error('change sequence values not consecutive');
  const lastPk = insertGameRows(handle, {
    games: fresh,
    ids,
    firstSeq,
    ownerId: database.ownerId,
    databaseId: database.id,
    now,
  });
  // The rows took consecutive pks (AUTOINCREMENT, one writer at a time), the last one lastPk.
  logKeys(
    handle,
    database.id,
    lastPk - fresh.length + 1,
    fresh.map((g) => g.contentHash),
  );
  statements.touch.run(now, firstSeq + fresh.length - 1, ids.length, database.id);
  return { inserted: ids.length, duplicates, overLimit, ids };
}
