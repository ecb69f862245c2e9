// Databases: an owner's named collections of games. `store.databases`: created and looked up by id, slug or
// name, their live games counted, their export's version stamp, and their deletion (which tombstones their
// games, each with a change of its own).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { StoreError } from './errors.ts';
import { TOMBSTONE } from './game-columns.ts';
import { prepared } from './prepared.ts';
import { toDatabase } from './rows.ts';
import { slugify } from './slug.ts';
import { storable } from './storable.ts';
import type { Database } from './types.ts';

/** The largest maxGames: what `databases.max_games` holds on PostgreSQL (integer), and so on both dialects. */
export const MAX_GAMES_LIMIT = 2 ** 31 - 1;

export interface NewDatabase {
  ownerId: string;
  name: string;
  private?: boolean;
  maxGames?: number | null;
}

/** The owner's live databases, for a lookup to narrow down. */
export function liveDatabasesOf(db: Executor, ownerId: string) {
  return db
    .selectFrom('databases')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null);
}

/** Whether the database exists and is not deleted (read in the caller's transaction). */
export async function isLive(db: Executor, databaseId: string): Promise<boolean> {
  const row = await db
    .selectFrom('databases')
    .select('id')
    .where('id', '=', databaseId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Marks a write to the database's games, in the write's transaction: its time, its seq for the export's
 * version (Databases.version), and the change in the number of its live games (`added`, negative for games
 * gone).
 */
export async function touchDatabase(
  db: Executor,
  databaseId: string,
  now: number,
  seq: number,
  added: number,
): Promise<void> {
  await db
    .updateTable('databases')
    .set({ updated_at: now, games_seq: seq, game_count: sql`game_count + ${added}` })
    .where('id', '=', databaseId)
    .execute();
}

export class Databases {
  private readonly ctx: StoreContext;
  /** A database's kept count of its live games, for every game list of the API: compiled once. */
  private readonly kept;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
    this.kept = prepared(ctx.reads.primary.run, 1, (databaseId: string) =>
      ctx.db
        .selectFrom('databases')
        .select('game_count as total')
        .where('id', '=', databaseId)
        .where('deleted_at', 'is', null),
    );
  }

  async add(input: NewDatabase): Promise<Database> {
    const { maxGames } = input;
    if (maxGames != null && !(Number.isInteger(maxGames) && maxGames >= 1 && maxGames <= MAX_GAMES_LIMIT)) {
      throw new StoreError(`maxGames must be a whole number from 1 to ${MAX_GAMES_LIMIT}, got ${maxGames}`);
    }
    return this.ctx.write(input.ownerId, (trx) => this.insert(trx, input));
  }

  /**
   * The databases an import names by `ref` (findByRef), or when there is none, a new one with `ref` as its
   * name. Looked up and created under the owner's write lock (StoreContext.write), so that concurrent imports
   * into a database not there yet create it once and all import into it.
   */
  async findOrAdd(ownerId: string, ref: string): Promise<{ databases: Database[]; created: boolean }> {
    return this.ctx.write(ownerId, async (trx) => {
      const databases = await this.findByRef(ownerId, ref, trx);
      if (databases.length > 0) return { databases, created: false };
      return { databases: [await this.insert(trx, { ownerId, name: ref })], created: true };
    });
  }

  /** The live databases (of one owner, or of all) in creation order; an API read (read-routing.ts). */
  async list(ownerId?: string): Promise<Database[]> {
    const rows = await this.ctx.reads.read(({ db }) => {
      let query = db.selectFrom('databases').selectAll().where('deleted_at', 'is', null);
      if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
      return query.orderBy('created_at').orderBy('id').execute();
    });
    return rows.map(toDatabase);
  }

  /** One of the owner's live databases by UUID or slug; an API read (read-routing.ts). */
  async find(ownerId: string, idOrSlug: string): Promise<Database | undefined> {
    if (!storable(idOrSlug)) return undefined;
    const row = await this.ctx.reads.read(({ db }) =>
      liveDatabasesOf(db, ownerId)
        .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
        .orderBy(sql`case when id = ${idOrSlug} then 0 else 1 end`)
        .executeTakeFirst(),
    );
    return row && toDatabase(row);
  }

  /**
   * For the CLI: the owner's live databases that `ref` names (read on `db`, the store's connection or a
   * transaction). The one with that id, else the one with that slug and every one with that name. A slug may
   * be another database's exact name ("Games" has the slug `games`, a second database named "games" gets
   * `games-2`): both are returned, so that the caller refuses the ambiguity rather than pick the slug's and,
   * say, delete the database the operator did not name. An id is generated, never typed as a name by chance:
   * it names its database alone.
   */
  async findByRef(ownerId: string, ref: string, db: Executor = this.ctx.db): Promise<Database[]> {
    if (!storable(ref)) return [];
    const rows = await liveDatabasesOf(db, ownerId)
      .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref), eb('name', '=', ref)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const byId = rows.find((row) => row.id === ref);
    return (byId ? [byId] : rows).map(toDatabase);
  }

  /**
   * The database's live games, counted on its (database_id, deleted, pk) index: no game row is read (on
   * `db`, the store's connection or a transaction).
   */
  async countGames(databaseId: string, db: Executor = this.ctx.db): Promise<number> {
    const row = await db
      .selectFrom('games')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A database's live games, as its row keeps the count (migration 0011); 0 for a deleted one. */
  async gameTotal(databaseId: string): Promise<number> {
    const [row] = await this.ctx.reads.read(({ run }) => this.kept.on(run)(databaseId));
    return Number(row?.total ?? 0);
  }

  /**
   * A number that changes whenever the database's PGN export does, read without reading its games: what
   * the export's ETag is made of. The seq of the latest write to its games (an import, an update, a move in
   * or out, a deletion), which every such write records on the database row in its own transaction
   * (touchDatabase). Seqs are never reused, so two different contents never share a version. One
   * primary-key lookup, however many games the database or its owner has.
   */
  async version(databaseId: string): Promise<number> {
    const row = await this.ctx.reads.read(({ db }) =>
      db.selectFrom('databases').select('games_seq').where('id', '=', databaseId).executeTakeFirst(),
    );
    return Number(row?.games_seq ?? 0);
  }

  /**
   * Deletes a live database: each of its games becomes a tombstone with a change of its own, and the
   * database disappears (its id and slug stay taken). Undefined when it is already gone.
   */
  async delete(database: Database): Promise<{ tombstoned: number; deletedAt: number } | undefined> {
    const { adapter } = this.ctx;
    return this.ctx.write(database.ownerId, async (trx, changes) => {
      if (!(await isLive(trx, database.id))) return undefined;
      const count = await this.countGames(database.id, trx);
      const { seqs, now } = await changes.take(count);
      // One statement gives the games their seqs in import order (the owner's other writers wait): the n-th
      // game gets the n-th value.
      await sql`
        update games
        set deleted = 1, seq = ${adapter.seqAt(seqs, sql.ref('ranked.n'))}, updated_at = ${now},
            pgn = ${TOMBSTONE.pgn}, moves = ${TOMBSTONE.moves}, fen = ${TOMBSTONE.fen}, metadata = ${TOMBSTONE.metadata}
        from (
          select pk, row_number() over (order by pk) as n
          from games where database_id = ${database.id} and deleted = 0
        ) as ranked
        where games.pk = ranked.pk`.execute(trx);
      await trx
        .updateTable('databases')
        .set({
          deleted_at: now,
          updated_at: now,
          game_count: 0,
          ...(count > 0 && { games_seq: seqs.at(-1) }),
        })
        .where('id', '=', database.id)
        .execute();
      await adapter.forgetGameKeys(trx, database.id);
      return { tombstoned: count, deletedAt: now };
    });
  }

  /** Creates a database, its slug made unique among the owner's (`-2`, `-3`, ...), in a write of the owner. */
  private async insert(trx: Executor, input: NewDatabase): Promise<Database> {
    const base = slugify(input.name);
    const taken = new Set(
      (
        await trx
          .selectFrom('databases')
          .select('slug')
          .where('owner_id', '=', input.ownerId)
          .where('slug', 'like', `${base}%`)
          .execute()
      ).map((r) => r.slug),
    );
    let slug = base;
    for (let n = 2; taken.has(slug); n++) slug = `${base}-${n}`;
    const now = Date.now();
    const database: Database = {
      id: randomUUID(),
      ownerId: input.ownerId,
      name: input.name,
      slug,
      private: input.private ?? false,
      maxGames: input.maxGames ?? null,
      gameCount: 0,
      createdAt: now,
      updatedAt: now,
    };
    await trx
      .insertInto('databases')
      .values({
        id: database.id,
        owner_id: database.ownerId,
        name: database.name,
        slug,
        private: database.private ? 1 : 0,
        max_games: database.maxGames,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      .execute();
    return database;
  }
}
