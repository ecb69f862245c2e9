// `store.games`: the reads of games (games.ts) and every write to them, each in a write transaction of the
// games' owner (StoreContext.write): an import's batch, a game updated, moved or deleted. (A database deleted
// with its games is databases.ts's.)
import type { Kysely, UpdateObject } from 'kysely';
import type { Changes } from './change-allocation.ts';
import type { Executor, StoreContext } from './context.ts';
import { type Databases, isLive, liveDatabasesOf, touchDatabase } from './databases.ts';
import { StoreError } from './errors.ts';
import { contentColumns, TOMBSTONE } from './game-columns.ts';
import { GameReads, type LiveGame, liveGame } from './games.ts';
import { changeColumns, toChange } from './rows.ts';
import type { DB } from './schema.ts';
import type { Database, GameChange, GameRecord, InsertOutcome } from './types.ts';

export class Games extends GameReads {
  private readonly databases: Databases;

  constructor(ctx: StoreContext, databases: Databases) {
    super(ctx);
    this.databases = databases;
  }

  /**
   * Adds games to a database in one transaction. A game whose content is already in the database (or
   * earlier in the same batch) is skipped unless allowDuplicates; games beyond maxGames are not added. A
   * database deleted meanwhile (an import runs for minutes, `databases delete` may come in between) takes no
   * more games: StoreError. Checked under the owner's write lock, which a database's deletion takes too.
   */
  async insert(database: Database, games: GameRecord[], allowDuplicates = false): Promise<InsertOutcome> {
    return this.ctx.write(database.ownerId, async (trx, changes) => {
      if (!(await isLive(trx, database.id))) {
        throw new StoreError(
          `database "${database.slug}" was deleted while the import ran: no more games were added to it`,
        );
      }
      return this.ctx.adapter.insertBatch({
        trx,
        database,
        games,
        allowDuplicates,
        take: changes.take,
        liveCount: () => this.databases.countGames(database.id, trx),
      });
    });
  }

  /** Replaces a live game's content, keeping its id and database. Undefined when there is no such game. */
  async update(id: string, game: GameRecord): Promise<GameChange | undefined> {
    const { adapter } = this.ctx;
    return this.writeGame(id, async (trx, current, changes) => {
      const change = await changeGame(
        trx,
        changes,
        id,
        { ...contentColumns(game, id), ...adapter.gameKeyColumns(current.database_id, game.contentHash) },
        [[current.database_id, 0]],
      );
      adapter.logGameKey(current.database_id, current.pk, game.contentHash);
      return change;
    });
  }

  /**
   * Moves a live game to another live database of the same owner. Undefined when there is no such game;
   * moved false (and no write) when it is already there. A full target (maxGames) is refused.
   */
  async move(
    id: string,
    target: Database,
  ): Promise<{ change: GameChange; fromDatabaseId: string; moved: boolean } | undefined> {
    const { adapter } = this.ctx;
    return this.writeGame(id, async (trx, current, changes) => {
      const into = await liveDatabasesOf(trx, current.owner_id)
        .where('id', '=', target.id)
        .executeTakeFirst();
      if (!into) throw new StoreError(`no database "${target.slug}" of the game's owner`);
      const from = current.database_id;
      if (into.id === from) return { change: await changeOf(trx, id), fromDatabaseId: from, moved: false };
      if (
        into.max_games !== null &&
        (await this.databases.countGames(into.id, trx)) >= Number(into.max_games)
      ) {
        throw new StoreError(`database "${into.slug}" is full (maxGames ${into.max_games})`);
      }
      const change = await changeGame(
        trx,
        changes,
        id,
        { database_id: into.id, ...adapter.gameKeyColumns(into.id, current.content_hash) },
        [
          [from, -1],
          [into.id, 1],
        ],
      );
      adapter.logGameKey(into.id, current.pk, current.content_hash);
      return { change, fromDatabaseId: from, moved: true };
    });
  }

  /** Turns a live game into a tombstone (docs/design.md 22). Undefined when there is no such game. */
  async delete(id: string): Promise<GameChange | undefined> {
    return this.writeGame(id, (trx, current, changes) =>
      changeGame(trx, changes, id, TOMBSTONE, [[current.database_id, -1]]),
    );
  }

  /**
   * A write to one live game: finds its owner, takes the owner's write lock (StoreContext.write), then reads
   * the game again, since another writer may have changed it meanwhile. Undefined when there is no such game.
   */
  private async writeGame<T>(
    id: string,
    fn: (trx: Kysely<DB>, current: LiveGame, changes: Changes) => Promise<T>,
  ): Promise<T | undefined> {
    const owner = await liveGame(this.ctx.db, id);
    if (!owner) return undefined;
    return this.ctx.write(owner.owner_id, async (trx, changes) => {
      const current = await liveGame(trx, id);
      return current && fn(trx, current, changes);
    });
  }
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
