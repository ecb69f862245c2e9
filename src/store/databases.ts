// Databases: an owner's named collections of games. Created and looked up by id, slug or name; their live
// games counted. (Their deletion, which tombstones their games, is a write to games: game-writes.ts.)
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { StoreError } from './errors.ts';
import { toDatabase } from './rows.ts';
import type { DB } from './schema.ts';
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

export async function addDatabase(store: StoreContext, input: NewDatabase): Promise<Database> {
  const { maxGames } = input;
  if (maxGames != null && !(Number.isInteger(maxGames) && maxGames >= 1 && maxGames <= MAX_GAMES_LIMIT)) {
    throw new StoreError(`maxGames must be a whole number from 1 to ${MAX_GAMES_LIMIT}, got ${maxGames}`);
  }
  return store.write(input.ownerId, (trx) => insertDatabase(trx, input));
}

/**
 * The databases an import names by `ref` (findDatabases), or when there is none, a new one with `ref` as
 * its name. Looked up and created under the owner's write lock (Store.write), so that concurrent imports
 * into a database not there yet create it once and all import into it.
 */
export async function findOrAddDatabase(
  store: StoreContext,
  ownerId: string,
  ref: string,
): Promise<{ databases: Database[]; created: boolean }> {
  return store.write(ownerId, async (trx) => {
    const databases = await findDatabases(trx, ownerId, ref);
    if (databases.length > 0) return { databases, created: false };
    return { databases: [await insertDatabase(trx, { ownerId, name: ref })], created: true };
  });
}

/** The live databases (of one owner, or of all) in creation order. */
export async function listDatabases(db: Kysely<DB>, ownerId?: string): Promise<Database[]> {
  let query = db.selectFrom('databases').selectAll().where('deleted_at', 'is', null);
  if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
  const rows = await query.orderBy('created_at').orderBy('id').execute();
  return rows.map(toDatabase);
}

/** The owner's live databases, for a lookup to narrow down. */
export function liveDatabasesOf(db: Executor, ownerId: string) {
  return db
    .selectFrom('databases')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null);
}

/** One of the owner's live databases by UUID or slug. */
export async function findDatabase(
  db: Kysely<DB>,
  ownerId: string,
  idOrSlug: string,
): Promise<Database | undefined> {
  if (!storable(idOrSlug)) return undefined;
  const row = await liveDatabasesOf(db, ownerId)
    .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
    .orderBy(sql`case when id = ${idOrSlug} then 0 else 1 end`)
    .executeTakeFirst();
  return row && toDatabase(row);
}

/**
 * The owner's live databases that `ref` names: the one with that id, else the one with that slug and every
 * one with that name. A slug may be another database's exact name ("Games" has the slug `games`, a second
 * database named "games" gets `games-2`): both are returned, so that the caller refuses the ambiguity rather
 * than pick the slug's and, say, delete the database the operator did not name. An id is generated, never
 * typed as a name by chance: it names its database alone.
 */
export async function findDatabases(db: Executor, ownerId: string, ref: string): Promise<Database[]> {
  if (!storable(ref)) return [];
  const rows = await liveDatabasesOf(db, ownerId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref), eb('name', '=', ref)]))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const byId = rows.find((row) => row.id === ref);
  return (byId ? [byId] : rows).map(toDatabase);
}

/** The database's live games, counted on its (database_id, deleted, pk) index: no game row is read. */
export async function liveGameCount(db: Executor, databaseId: string): Promise<number> {
  const row = await db
    .selectFrom('games')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('database_id', '=', databaseId)
    .where('deleted', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
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

/** Creates a database, its slug made unique among the owner's (`-2`, `-3`, ...). Only inside Store.write. */
async function insertDatabase(trx: Executor, input: NewDatabase): Promise<Database> {
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

/**
 * Marks a write to the database's games: its time, its seq for the export's ETag (etags.ts), and the change
 * in the number of its live games (`added`, negative for games gone).
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
