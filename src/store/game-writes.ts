// Every write to games, each in a write transaction of the games' owner (Store.write): an import's batch,
// a game updated, moved or deleted, a database deleted with its games.
import { type Kysely, sql, type UpdateObject } from 'kysely';
import type { Changes } from './change-allocation.ts';
import type { Executor, StoreContext } from './context.ts';
import { isLive, liveDatabasesOf, liveGameCount, touchDatabase } from './databases.ts';
import { StoreError } from './errors.ts';
import { contentColumns } from './game-columns.ts';
import type { GameBatch } from './game-insert.ts';
import { type LiveGame, liveGame } from './games.ts';
import { dedupKey, dedupKeySql } from './postgres/dedup-key.ts';
import { insertPostgresBatch } from './postgres/game-insert.ts';
import { changeColumns, toChange } from './rows.ts';
import type { DB } from './schema.ts';
import { insertSqliteBatch } from './sqlite/game-insert.ts';
import { logKeys } from './sqlite/game-keys.ts';
import { sqliteHandleOf } from './sqlite/handle.ts';
import type { Database, GameChange, GameRecord, InsertOutcome } from './types.ts';

/**
 * What a deleted game keeps is its feed item: id, database, players, result (and the list fields).
 * Its moves and PGN are dropped: deleted content is not kept.
 */
const TOMBSTONE = { deleted: 1, pgn: '', moves: '', fen: '', metadata: '{}' } as const;

/**
 * Adds games to a database in one transaction. A game whose content is already in the database (or earlier
 * in the same batch) is skipped unless allowDuplicates; games beyond maxGames are not added. A database
 * deleted meanwhile (an import runs for minutes, `databases delete` may come in between) takes no more
 * games: StoreError. Checked under the owner's write lock, which deleteDatabase takes too.
 */
export async function insertGames(
  store: StoreContext,
  database: Database,
  games: GameRecord[],
  allowDuplicates: boolean,
): Promise<InsertOutcome> {
  return store.write(database.ownerId, async (trx, changes) => {
    if (!(await isLive(trx, database.id))) {
      throw new StoreError(
        `database "${database.slug}" was deleted while the import ran: no more games were added to it`,
      );
    }
    const batch: GameBatch = { trx, database, games, allowDuplicates, take: changes.take };
    const handle = sqliteHandleOf(store.db);
    return handle ? insertSqliteBatch(handle, batch) : insertPostgresBatch(batch);
  });
}

/** Replaces a live game's content, keeping its id and database. Undefined when there is no such game. */
export async function updateGame(
  store: StoreContext,
  id: string,
  game: GameRecord,
): Promise<GameChange | undefined> {
  return writeGame(store, id, async (trx, current, changes) => {
    const change = await changeGame(
      trx,
      changes,
      id,
      {
        ...contentColumns(game, id),
        ...(store.dialect === 'postgres' && { dedup_key: dedupKey(current.database_id, game.contentHash) }),
      },
      [[current.database_id, 0]],
    );
    logGameKey(store, current.database_id, current.pk, game.contentHash);
    return change;
  });
}

/**
 * Moves a live game to another live database of the same owner. Undefined when there is no such game;
 * moved false (and no write) when it is already there. A full target (maxGames) is refused.
 */
export async function moveGame(
  store: StoreContext,
  id: string,
  target: Database,
): Promise<{ change: GameChange; fromDatabaseId: string; moved: boolean } | undefined> {
  return writeGame(store, id, async (trx, current, changes) => {
    const into = await liveDatabasesOf(trx, current.owner_id).where('id', '=', target.id).executeTakeFirst();
    if (!into) throw new StoreError(`no database "${target.slug}" of the game's owner`);
    const from = current.database_id;
    if (into.id === from) return { change: await changeOf(trx, id), fromDatabaseId: from, moved: false };
    if (into.max_games !== null && (await liveGameCount(trx, into.id)) >= Number(into.max_games)) {
      throw new StoreError(`database "${into.slug}" is full (maxGames ${into.max_games})`);
    }
    const change = await changeGame(
      trx,
      changes,
      id,
      { database_id: into.id, ...(store.dialect === 'postgres' && { dedup_key: dedupKeySql(into.id) }) },
      [
        [from, -1],
        [into.id, 1],
      ],
    );
    logGameKey(store, into.id, current.pk, current.content_hash);
    return { change, fromDatabaseId: from, moved: true };
  });
}

/** Turns a live game into a tombstone (docs/design.md 22). Undefined when there is no such game. */
export async function deleteGame(store: StoreContext, id: string): Promise<GameChange | undefined> {
  return writeGame(store, id, (trx, current, changes) =>
    changeGame(trx, changes, id, TOMBSTONE, [[current.database_id, -1]]),
  );
}

/**
 * Deletes a live database: each of its games becomes a tombstone with a change of its own, and the database
 * disappears (its id and slug stay taken). Undefined when it is already gone.
 */
export async function deleteDatabase(
  store: StoreContext,
  database: Database,
): Promise<{ tombstoned: number; deletedAt: number } | undefined> {
  return store.write(database.ownerId, async (trx, changes) => {
    if (!(await isLive(trx, database.id))) return undefined;
    const count = await liveGameCount(trx, database.id);
    const { seqs, now } = await changes.take(count);
    // One statement gives the games their seqs in import order (the owner's other writers wait). The n-th
    // game gets the n-th value: consecutive on SQLite, an array on PostgreSQL.
    const nthSeq =
      store.dialect === 'postgres'
        ? sql`(${seqs}::bigint[])[ranked.n]`
        : sql`${(seqs[0] ?? 1) - 1} + ranked.n`;
    await sql`
      update games
      set deleted = 1, seq = ${nthSeq}, updated_at = ${now},
          pgn = ${TOMBSTONE.pgn}, moves = ${TOMBSTONE.moves}, fen = ${TOMBSTONE.fen}, metadata = ${TOMBSTONE.metadata}
      from (
        select pk, row_number() over (order by pk) as n
        from games where database_id = ${database.id} and deleted = 0
      ) as ranked
      where games.pk = ranked.pk`.execute(trx);
    await trx
      .updateTable('databases')
      .set({ deleted_at: now, updated_at: now, game_count: 0, ...(count > 0 && { games_seq: seqs.at(-1) }) })
      .where('id', '=', database.id)
      .execute();
    // SQLite: its game keys find only tombstones now (the log's ids are AUTOINCREMENT, never reused).
    if (store.dialect === 'sqlite')
      await trx.deleteFrom('game_keys').where('database_id', '=', database.id).execute();
    return { tombstoned: count, deletedAt: now };
  });
}

/**
 * A write to one live game: finds its owner, takes the owner's write lock (Store.write), then reads the
 * game again, since another writer may have changed it meanwhile. Undefined when there is no such game.
 */
async function writeGame<T>(
  store: StoreContext,
  id: string,
  fn: (trx: Kysely<DB>, current: LiveGame, changes: Changes) => Promise<T>,
): Promise<T | undefined> {
  const owner = await liveGame(store.db, id);
  if (!owner) return undefined;
  return store.write(owner.owner_id, async (trx, changes) => {
    const current = await liveGame(trx, id);
    return current && fn(trx, current, changes);
  });
}

/**
 * Gives a game a change of its own: sets the columns, its new seq and the change time, and marks the write
 * on the databases it leaves or is in, each with the change in its number of live games. Returns the game's
 * feed item.
 */
async function changeGame(
  trx: Executor,
  changes: Changes,
  id: string,
  set: UpdateObject<DB, 'games'>,
  databases: [id: string, added: number][],
): Promise<GameChange> {
  const { seqs, now } = await changes.take(1);
  const seq = seqs[0] as number;
  await trx
    .updateTable('games')
    .set({ ...set, seq, updated_at: now })
    .where('id', '=', id)
    .execute();
  for (const [databaseId, added] of databases) await touchDatabase(trx, databaseId, now, seq, added);
  return changeOf(trx, id);
}

async function changeOf(db: Executor, id: string): Promise<GameChange> {
  return toChange(
    await db.selectFrom('games').select(changeColumns).where('id', '=', id).executeTakeFirstOrThrow(),
  );
}

/** SQLite: logs a game's key for its database, within the write transaction (sqlite/game-keys.ts). */
function logGameKey(store: StoreContext, databaseId: string, pk: number, contentHash: string): void {
  const handle = sqliteHandleOf(store.db);
  if (handle) logKeys(handle, databaseId, pk, [contentHash]);
}
