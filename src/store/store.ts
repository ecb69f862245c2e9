// The one interface to the data: every query of the service, scoped by owner, on either dialect.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { beginChanges, type Changes, lastSeq } from './change-allocation.ts';
import { contentColumns } from './game-columns.ts';
import { insertGameBatch, sqliteHandleOf } from './game-insert.ts';
import { dedupKey, dedupKeySql } from './postgres/dedup-key.ts';
import { kyselyRunner, prepared, type RunQuery } from './prepared.ts';
import { type DB, type GamesTable, playerColumns } from './schema.ts';
import { slugify } from './slug.ts';
import { BackgroundCheckpoints } from './sqlite/checkpoints.ts';
import { logKeys } from './sqlite/game-keys.ts';
import type {
  App,
  BulkWrites,
  Database,
  Dialect,
  GameChange,
  GameDetail,
  GameRecord,
  GameSummary,
  InsertOutcome,
  ListedGame,
  Page,
  Player,
  TokenInfo,
  User,
} from './types.ts';

export class StoreError extends Error {}

/**
 * For an insert after a lookup found nothing: another process may insert the same name in between, and the
 * unique index refuses ours. That is the lookup's "already exists", not a raw constraint error.
 */
function alreadyExists(message: string): (error: unknown) => never {
  return (error) => {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505') throw new StoreError(message);
    throw error;
  };
}

/** The largest maxGames: what `databases.max_games` holds on PostgreSQL (integer), and so on both dialects. */
export const MAX_GAMES_LIMIT = 2 ** 31 - 1;

/** PGN bytes one batch of a database's export reads at most (unless one game is larger). */
const EXPORT_BATCH_BYTES = 1 << 20;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

type GameRow = Selectable<GamesTable>;
type Executor = Kysely<DB> | Transaction<DB>;

const summaryColumns = [
  'id',
  'slug',
  'database_id',
  'event',
  'date',
  'result',
  'eco',
  ...playerColumns,
] as const;

export class Store {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;

  /** The queries every API request runs, compiled once (prepared.ts). */
  private readonly hot;

  private readonly limitSilence: (ms: number) => void;

  /**
   * The migrations that opening this store applied, in order: every one for a new store (0001_initial
   * first), the newer ones for a store that an older version made, none for a store already up to date.
   */
  migrationsApplied: readonly string[] = [];

  constructor(
    db: Kysely<DB>,
    dialect: Dialect,
    run: RunQuery = kyselyRunner(db),
    limitSilence: (ms: number) => void = () => undefined,
  ) {
    this.db = db;
    this.dialect = dialect;
    this.hot = hotQueries(db, run);
    this.limitSilence = limitSilence;
  }

  /**
   * PostgreSQL: from now on, a connection that gets no answer for ms is dropped, and its query fails as a
   * lost connection (postgres/sockets.ts). For the server, whose queries are short; not for a migration or
   * an import, whose statements may rightly run for minutes. SQLite: nothing.
   */
  dropSilentConnections(ms: number): void {
    this.limitSilence(ms);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /**
   * Prepares the store for a long run of insertGames (an import). On SQLite, checkpoints run on a thread of
   * their own meanwhile (sqlite/checkpoints.ts); PostgreSQL needs nothing.
   */
  bulkWrites(): BulkWrites {
    const handle = sqliteHandleOf(this.db);
    if (!handle || handle.memory) return { ready: async () => {}, committed: () => {}, end: async () => {} };
    return new BackgroundCheckpoints(handle);
  }

  /** A cheap query that fails when the store is unreachable. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /**
   * Runs fn in a write transaction on one owner's data; fn takes its change sequence values and change
   * time from `changes` (DESIGN.md 18). Every write to games goes through here, and each touches the
   * games of one owner only (a game never changes owner). Why a feed reader never misses a change
   * (DESIGN.md 19): the reader pages through one owner's games by seq, a page ends at the highest seq it
   * shows, and the next page starts above it. That loses nothing if, for each owner, seq order is commit
   * order: every change of the owner still to commit gets a seq above every seq a reader can already
   * see. Then a statement, which sees the commits up to one point, sees all of the owner's seqs up to the
   * highest it sees, and a cursor never steps over a seq that commits later.
   *
   * SQLite: the transaction begins IMMEDIATE, so it holds the store's one write lock from its first
   * statement to its commit; write transactions of every process run and commit one at a time, and the
   * seqs come from the `sequences` row inside them: the store-wide seq order is the commit order.
   *
   * PostgreSQL: transactions run at once and nextval() is not transactional, so values can commit out of
   * order: T1 takes 5, T2 takes 6 and commits, a reader pages past 6, then T1 commits 5 behind the cursor.
   * So the first statement of every write transaction locks the owner's `feed_heads` row (insert or
   * update), and the row lock holds until commit or rollback. Writers of one owner queue there, and the
   * next one takes its first value only after the previous one has committed (and left the snapshot's
   * in-progress list: PostgreSQL ends a transaction's visibility before it releases its locks). Its
   * nextval() values are therefore above all of the previous one's (`change_seq` has CACHE 1, so values
   * rise in the order they are taken, across sessions). For one owner, seq order is commit order. Writers
   * of different owners never wait for each other: their seqs interleave and may commit out of order,
   * which no reader can see, because every feed query is scoped to one owner. The lock is taken before fn
   * reads anything, so the dedup and maxGames checks of an import also see every earlier write of the
   * owner (each statement at READ COMMITTED sees what committed before it started).
   *
   * A game's row carries only its latest seq: written again, it moves up to a new seq, so a client past
   * its old seq meets it again, in its latest state. The change time is taken under the same lock and
   * never goes backwards (per owner in `feed_heads`, store-wide in the `change_time` row on SQLite; a
   * clock step back or another instance's slower clock reuses the latest), so an owner's updatedAt rises
   * with seq and `since` can start the feed at "the first seq whose updated_at >= since".
   */
  async write<T>(ownerId: string, fn: (trx: Kysely<DB>, changes: Changes) => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres') {
      return this.db
        .transaction()
        .execute(async (trx) => fn(trx, await beginChanges(trx, 'postgres', ownerId)))
        .catch((error: unknown) => {
          // SQLSTATE 22021: text holding U+0000, which PostgreSQL cannot store (SQLite can).
          if ((error as { code?: unknown }).code === '22021') {
            throw new StoreError('the text holds a NUL character (U+0000), which PostgreSQL cannot store');
          }
          throw error;
        });
    }
    return this.db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      try {
        const result = await fn(conn, await beginChanges(conn, 'sqlite', ownerId));
        await sql`commit`.execute(conn);
        return result;
      } catch (error) {
        // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) make SQLite roll the transaction back
        // itself; a ROLLBACK then fails with "no transaction is active", which must not hide the cause.
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw error;
      }
    });
  }

  /** The highest change sequence value taken so far (on PostgreSQL possibly not committed yet). */
  async lastSeq(): Promise<number> {
    return lastSeq(this.db, this.dialect);
  }

  // ---- server secret -------------------------------------------------------------------------------

  /** The server secret, created on first use (DESIGN.md 24). */
  async serverSecret(): Promise<string> {
    const found = await this.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', 'secret')
      .executeTakeFirst();
    if (found) return found.value;
    const secret = randomBytes(32).toString('base64url');
    await this.db
      .insertInto('settings')
      .values({ key: 'secret', value: secret })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', 'secret')
      .executeTakeFirstOrThrow();
    return row.value;
  }

  // ---- users and apps ------------------------------------------------------------------------------

  async addUser(input: { login: string; name?: string; email?: string; image?: string }): Promise<User> {
    if (await this.findUser(input.login)) throw new StoreError(`user "${input.login}" already exists`);
    const user: User = {
      id: randomUUID(),
      login: input.login,
      name: input.name ?? null,
      email: input.email ?? null,
      image: input.image ?? null,
      createdAt: Date.now(),
    };
    await this.db
      .insertInto('users')
      .values({
        id: user.id,
        login: user.login,
        name: user.name,
        email: user.email,
        image: user.image,
        created_at: user.createdAt,
      })
      .execute()
      .catch(alreadyExists(`user "${input.login}" already exists`));
    return user;
  }

  async findUser(login: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('login', '=', login).executeTakeFirst();
    return (
      row && { ...pick(row, ['id', 'login', 'name', 'email', 'image']), createdAt: Number(row.created_at) }
    );
  }

  async listUsers(): Promise<User[]> {
    const rows = await this.db
      .selectFrom('users')
      .selectAll()
      .orderBy('created_at')
      .orderBy('login')
      .execute();
    return rows.map((row) => ({
      ...pick(row, ['id', 'login', 'name', 'email', 'image']),
      createdAt: Number(row.created_at),
    }));
  }

  async getUserById(id: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return (
      row && { ...pick(row, ['id', 'login', 'name', 'email', 'image']), createdAt: Number(row.created_at) }
    );
  }

  async addApp(input: { name: string; sector?: string }): Promise<App> {
    if (await this.findApp(input.name)) throw new StoreError(`app "${input.name}" already exists`);
    const id = randomUUID();
    const app: App = { id, name: input.name, sector: input.sector ?? id, createdAt: Date.now() };
    await this.db
      .insertInto('apps')
      .values({ id, name: app.name, sector: app.sector, created_at: app.createdAt })
      .execute()
      .catch(alreadyExists(`app "${input.name}" already exists`));
    return app;
  }

  async findApp(name: string): Promise<App | undefined> {
    const row = await this.db.selectFrom('apps').selectAll().where('name', '=', name).executeTakeFirst();
    return row && { id: row.id, name: row.name, sector: row.sector, createdAt: Number(row.created_at) };
  }

  async listApps(): Promise<App[]> {
    const rows = await this.db.selectFrom('apps').selectAll().orderBy('created_at').orderBy('name').execute();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      sector: row.sector,
      createdAt: Number(row.created_at),
    }));
  }

  // ---- tokens --------------------------------------------------------------------------------------

  /** Issues a token: `cp_` and 256 random bits. Only its SHA-256 is kept. */
  async issueToken(input: {
    userId: string;
    appId: string;
    scopes: string[];
    expiresAt: number | null;
  }): Promise<{ id: string; token: string }> {
    const token = `cp_${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    await this.db
      .insertInto('tokens')
      .values({
        id,
        hash: hashToken(token),
        user_id: input.userId,
        app_id: input.appId,
        scopes: input.scopes.join(' '),
        expires_at: input.expiresAt,
        revoked_at: null,
        created_at: Date.now(),
      })
      .execute();
    return { id, token };
  }

  private tokenQuery() {
    return tokenQuery(this.db);
  }

  /** The token with this SHA-256, whatever its state: the caller checks expiry and revocation. */
  async findTokenByHash(hash: string): Promise<TokenInfo | undefined> {
    const [row] = await this.hot.token(hash);
    return row && toTokenInfo(row);
  }

  async listTokens(): Promise<TokenInfo[]> {
    const rows = await this.tokenQuery().orderBy('tokens.created_at').orderBy('tokens.id').execute();
    return rows.map(toTokenInfo);
  }

  /** Revokes by token id or by the token itself. Returns the revoked token, undefined when none matched. */
  async revokeToken(tokenOrId: string): Promise<TokenInfo | undefined> {
    const row = await this.db
      .selectFrom('tokens')
      .select('id')
      .where((eb) => eb.or([eb('id', '=', tokenOrId), eb('hash', '=', hashToken(tokenOrId))]))
      .executeTakeFirst();
    if (!row) return undefined;
    await this.db
      .updateTable('tokens')
      .set({ revoked_at: Date.now() })
      .where('id', '=', row.id)
      .where('revoked_at', 'is', null)
      .execute();
    const info = await this.tokenQuery().where('tokens.id', '=', row.id).executeTakeFirstOrThrow();
    return toTokenInfo(info);
  }

  // ---- databases -----------------------------------------------------------------------------------

  async addDatabase(input: {
    ownerId: string;
    name: string;
    private?: boolean;
    maxGames?: number | null;
  }): Promise<Database> {
    const { maxGames } = input;
    if (maxGames != null && !(Number.isInteger(maxGames) && maxGames >= 1 && maxGames <= MAX_GAMES_LIMIT)) {
      throw new StoreError(`maxGames must be a whole number from 1 to ${MAX_GAMES_LIMIT}, got ${maxGames}`);
    }
    return this.write(input.ownerId, (trx) => insertDatabase(trx, input));
  }

  /**
   * The databases an import names by `ref` (findDatabases), or when there is none, a new one with `ref` as
   * its name. Looked up and created under the owner's write lock (Store.write), so that concurrent imports
   * into a database not there yet create it once and all import into it.
   */
  async findOrAddDatabase(
    ownerId: string,
    ref: string,
  ): Promise<{ databases: Database[]; created: boolean }> {
    return this.write(ownerId, async (trx) => {
      const databases = await databasesNamed(trx, ownerId, ref);
      if (databases.length > 0) return { databases, created: false };
      return { databases: [await insertDatabase(trx, { ownerId, name: ref })], created: true };
    });
  }

  /** The owner's live databases in creation order. */
  async listDatabases(ownerId?: string): Promise<Database[]> {
    let query = this.db.selectFrom('databases').selectAll().where('deleted_at', 'is', null);
    if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map(toDatabase);
  }

  /** One of the owner's live databases by UUID or slug. */
  async findDatabase(ownerId: string, idOrSlug: string): Promise<Database | undefined> {
    if (!storable(idOrSlug)) return undefined;
    const row = await this.db
      .selectFrom('databases')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
      .orderBy(sql`case when id = ${idOrSlug} then 0 else 1 end`)
      .executeTakeFirst();
    return row && toDatabase(row);
  }

  /** For the CLI: a database found by id, slug or exact name. */
  async findDatabaseByName(ownerId: string, ref: string): Promise<Database | undefined> {
    const found = await this.findDatabase(ownerId, ref);
    if (found) return found;
    const row = await this.db
      .selectFrom('databases')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('deleted_at', 'is', null)
      .where('name', '=', ref)
      .executeTakeFirst();
    return row && toDatabase(row);
  }

  /**
   * For the CLI: the owner's live databases that `ref` names. The one with that id, else the one with that
   * slug and every one with that exact name: names may repeat, a slug may be another's name, and the caller
   * decides what several mean.
   */
  async findDatabases(ownerId: string, ref: string): Promise<Database[]> {
    return databasesNamed(this.db, ownerId, ref);
  }

  async countGames(databaseId: string): Promise<number> {
    return liveGameCount(this.db, databaseId);
  }

  // ---- games: writes -------------------------------------------------------------------------------

  /**
   * Adds games to a database in one transaction. A game whose content is already in the database (or
   * earlier in the same batch) is skipped unless allowDuplicates; games beyond maxGames are not added.
   * A database deleted meanwhile (an import runs for minutes, `databases delete` may come in between) takes
   * no more games: StoreError. Checked under the owner's write lock, which deleteDatabase takes too.
   */
  async insertGames(
    database: Database,
    games: GameRecord[],
    allowDuplicates = false,
  ): Promise<InsertOutcome> {
    return this.write(database.ownerId, async (trx, changes) => {
      if (!(await isLive(trx, database.id))) {
        throw new StoreError(
          `database "${database.slug}" was deleted while the import ran: no more games were added to it`,
        );
      }
      return insertGameBatch({ db: this.db, trx, database, games, allowDuplicates, take: changes.take });
    });
  }

  // ---- games: reads --------------------------------------------------------------------------------

  /** The owner's live games across all databases, in import order. */
  async listGames(ownerId: string, page: Page): Promise<ListedGame[]> {
    return this.liveGames('owner_id', ownerId, page);
  }

  /** One database's live games, in import order. */
  async listDatabaseGames(databaseId: string, page: Page): Promise<ListedGame[]> {
    return this.liveGames('database_id', databaseId, page);
  }

  private async liveGames(
    scope: 'owner_id' | 'database_id',
    value: string,
    page: Page,
  ): Promise<ListedGame[]> {
    const rows = await this.hot[scope](value, page.after ?? 0, page.limit, page.offset);
    return rows.map((row) => ({ ...toSummary(row), position: Number(row.pk) }));
  }

  /**
   * A number that changes whenever any of the owner's games changes: the highest change sequence among
   * the owner's rows. Every write to a game (import, update, move, delete, a database's deletion) gives
   * the row a new seq above all earlier ones and no game row is ever removed, so the number only rises;
   * per owner, seq order is commit order (see write()), so equal numbers mean equal game data.
   */
  async gamesVersion(ownerId: string): Promise<number> {
    const [row] = await this.hot.gamesVersion(ownerId);
    return Number(row?.version ?? 0);
  }

  /** One of the owner's live games by UUID. */
  async getGame(ownerId: string, id: string): Promise<GameDetail | undefined> {
    if (!storable(id)) return undefined;
    const [row] = await this.hot.game(ownerId, id);
    return row && toDetail(row);
  }

  /**
   * The PGN of every live game of a database in import order, read in keyset batches of at most
   * `batchSize` games and, unless a single game is larger, `batchBytes` bytes (constant memory). Each batch
   * is its own statement: a client that reads slowly holds no transaction or connection open.
   */
  async *databasePgn(
    databaseId: string,
    batchSize = 1000,
    batchBytes = EXPORT_BATCH_BYTES,
  ): AsyncGenerator<string> {
    const live = (after: number) =>
      this.db
        .selectFrom('games')
        .where('database_id', '=', databaseId)
        .where('deleted', '=', 0)
        .where('pk', '>', after)
        .orderBy('pk');
    let after = 0;
    for (;;) {
      // The sizes first: octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST. A batch
      // of 1000 engine games with long comments (TCEC) was 36 MB read in one synchronous SQLite call (the
      // event loop stalled 200-300 ms) and held by each export while its client read it.
      const sizes = await live(after)
        .select(['pk', sql<number>`octet_length(pgn)`.as('bytes')])
        .limit(batchSize)
        .execute();
      if (sizes.length === 0) return;
      let end = 0;
      let bytes = 0;
      for (const row of sizes) {
        bytes += Number(row.bytes);
        if (end > 0 && bytes > batchBytes) break;
        end++;
      }
      const last = Number(sizes[end - 1]?.pk);
      const rows = await live(after).select('pgn').where('pk', '<=', last).execute();
      for (const row of rows) yield row.pgn;
      if (end === sizes.length && sizes.length < batchSize) return;
      after = last;
    }
  }

  /** The owner's games (tombstones included) changed after a sequence value, oldest change first. */
  async listChanges(ownerId: string, afterSeq: number, limit: number): Promise<GameChange[]> {
    const rows = await this.hot.changes(ownerId, afterSeq, limit);
    return rows.map(toChange);
  }

  /**
   * The feed position just before the owner's first change at or after a time; the feed continues from
   * there by seq. A binary search over seq on the (owner_id, seq) index, valid because updated_at never
   * decreases as seq grows for one owner (Store.write): about log2(seq) index seeks instead of a scan.
   */
  async changePositionAt(ownerId: string, sinceMs: number): Promise<number> {
    // Every committed seq is <= `end`. A write of the owner that commits during the search gets a seq
    // above all of the owner's seqs the search can see (Store.write; on PostgreSQL it may be <= end, but
    // it is still above `low`, which is always one of them), so it lies after the position whatever the
    // search decides. Each step's statement sees the owner's changes up to some seq, all of them.
    const end = await this.lastSeq();
    // Invariant: the owner's games with seq <= low changed before sinceMs, those with seq >= high at or after.
    let low = 0;
    let high = end + 1;
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      const next = await this.db
        .selectFrom('games')
        .select(['seq', 'updated_at'])
        .where('owner_id', '=', ownerId)
        .where('seq', '>=', mid)
        .where('seq', '<', high)
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
      if (!next || Number(next.updated_at) >= sinceMs) high = mid;
      else low = Number(next.seq);
    }
    return low;
  }

  // ---- games and databases: changes from the CLI ----------------------------------------------------

  /** A live game by UUID, whoever owns it (the operator's view). */
  async findLiveGame(id: string): Promise<{ id: string; ownerId: string; databaseId: string } | undefined> {
    if (!storable(id)) return undefined;
    const row = await liveGame(this.db, id);
    return row && { id: row.id, ownerId: row.owner_id, databaseId: row.database_id };
  }

  /**
   * A write to one live game: finds its owner, takes the owner's write lock (Store.write), then reads the
   * game again, since another writer may have changed it meanwhile. Undefined when there is no such game.
   */
  private async writeGame<T>(
    id: string,
    fn: (trx: Kysely<DB>, current: LiveGame, changes: Changes) => Promise<T>,
  ): Promise<T | undefined> {
    const owner = await liveGame(this.db, id);
    if (!owner) return undefined;
    return this.write(owner.owner_id, async (trx, changes) => {
      const current = await liveGame(trx, id);
      return current && fn(trx, current, changes);
    });
  }

  /** Replaces a live game's content, keeping its id and database. Undefined when there is no such game. */
  async updateGame(id: string, game: GameRecord): Promise<GameChange | undefined> {
    return this.writeGame(id, async (trx, current, changes) => {
      const { seqs, now } = await changes.take(1);
      await trx
        .updateTable('games')
        .set({
          ...contentColumns(game, id),
          ...(this.dialect === 'postgres' && { dedup_key: dedupKey(current.database_id, game.contentHash) }),
          seq: seqs[0],
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
      this.logGameKey(current.database_id, current.pk, game.contentHash);
      await touchDatabase(trx, current.database_id, now, seqs[0] as number);
      return changeOf(trx, id);
    });
  }

  /**
   * Moves a live game to another live database of the same owner. Undefined when there is no such game;
   * moved false (and no write) when it is already there. A full target (maxGames) is refused.
   */
  async moveGame(
    id: string,
    target: Database,
  ): Promise<{ change: GameChange; fromDatabaseId: string; moved: boolean } | undefined> {
    return this.writeGame(id, async (trx, current, changes) => {
      const into = await trx
        .selectFrom('databases')
        .selectAll()
        .where('id', '=', target.id)
        .where('owner_id', '=', current.owner_id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!into) throw new StoreError(`no database "${target.slug}" of the game's owner`);
      const from = current.database_id;
      if (into.id === from) return { change: await changeOf(trx, id), fromDatabaseId: from, moved: false };
      if (into.max_games !== null && (await liveGameCount(trx, into.id)) >= Number(into.max_games)) {
        throw new StoreError(`database "${into.slug}" is full (maxGames ${into.max_games})`);
      }
      const { seqs, now } = await changes.take(1);
      await trx
        .updateTable('games')
        .set({
          database_id: into.id,
          ...(this.dialect === 'postgres' && { dedup_key: dedupKeySql(into.id) }),
          seq: seqs[0],
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
      this.logGameKey(into.id, current.pk, current.content_hash);
      await touchDatabase(trx, from, now, seqs[0] as number);
      await touchDatabase(trx, into.id, now, seqs[0] as number);
      return { change: await changeOf(trx, id), fromDatabaseId: from, moved: true };
    });
  }

  /** SQLite: logs a game's key for its database, within the write transaction (sqlite/game-keys.ts). */
  private logGameKey(databaseId: string, pk: number, contentHash: string): void {
    const handle = sqliteHandleOf(this.db);
    if (handle) logKeys(handle, databaseId, pk, [contentHash]);
  }

  /** Turns a live game into a tombstone (DESIGN.md 22). Undefined when there is no such game. */
  async deleteGame(id: string): Promise<GameChange | undefined> {
    return this.writeGame(id, async (trx, current, changes) => {
      const { seqs, now } = await changes.take(1);
      await trx
        .updateTable('games')
        .set({ ...TOMBSTONE, seq: seqs[0], updated_at: now })
        .where('id', '=', id)
        .execute();
      await touchDatabase(trx, current.database_id, now, seqs[0] as number);
      return changeOf(trx, id);
    });
  }

  /**
   * Deletes a live database: each of its games becomes a tombstone with a change of its own, and the
   * database disappears (its id and slug stay taken). Undefined when it is already gone.
   */
  async deleteDatabase(database: Database): Promise<{ tombstoned: number; deletedAt: number } | undefined> {
    return this.write(database.ownerId, async (trx, changes) => {
      if (!(await isLive(trx, database.id))) return undefined;
      const count = await liveGameCount(trx, database.id);
      const { seqs, now } = await changes.take(count);
      // One statement gives the games their seqs in import order (the owner's other writers wait). The
      // n-th game gets the n-th value: consecutive on SQLite, an array on PostgreSQL.
      const nthSeq =
        this.dialect === 'postgres'
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
        .set({ deleted_at: now, updated_at: now, ...(count > 0 && { games_seq: seqs.at(-1) }) })
        .where('id', '=', database.id)
        .execute();
      // SQLite: its game keys find only tombstones now (the log's ids are AUTOINCREMENT, never reused).
      if (this.dialect === 'sqlite')
        await trx.deleteFrom('game_keys').where('database_id', '=', database.id).execute();
      return { tombstoned: count, deletedAt: now };
    });
  }
}

/** Creates a database, its slug made unique among the owner's (`-2`, `-3`, ...). Only inside Store.write. */
async function insertDatabase(
  trx: Executor,
  input: { ownerId: string; name: string; private?: boolean; maxGames?: number | null },
): Promise<Database> {
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
 * The owner's live databases that `ref` names (Store.findDatabases): the one with that id, else the one with
 * that slug and every one with that name. A slug may be another database's exact name ("Games" has the slug
 * `games`, a second database named "games" gets `games-2`): both are returned, so that the caller refuses the
 * ambiguity rather than pick the slug's and, say, delete the database the operator did not name. An id is
 * generated, never typed as a name by chance: it names its database alone.
 */
async function databasesNamed(db: Executor, ownerId: string, ref: string): Promise<Database[]> {
  if (!storable(ref)) return [];
  const rows = await db
    .selectFrom('databases')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref), eb('name', '=', ref)]))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const byId = rows.find((row) => row.id === ref);
  return (byId ? [byId] : rows).map(toDatabase);
}

/**
 * False for text that no id or slug can equal because it holds U+0000: PostgreSQL refuses it even as a
 * query parameter (SQLSTATE 22021), where SQLite just finds nothing. Lookups of outside input (a path
 * segment such as `%00`) check it first, so both dialects answer "not found".
 */
function storable(text: string): boolean {
  return !text.includes('\0');
}

function pick<T, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = obj[key];
  return out;
}

function toTokenInfo(row: {
  id: string;
  user_id: string;
  login: string;
  app_id: string;
  app_name: string;
  sector: string;
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
}): TokenInfo {
  return {
    id: row.id,
    userId: row.user_id,
    userLogin: row.login,
    appId: row.app_id,
    appName: row.app_name,
    appSector: row.sector,
    scopes: row.scopes.split(' ').filter(Boolean),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    createdAt: Number(row.created_at),
  };
}

function toDatabase(row: Selectable<DB['databases']>): Database {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    slug: row.slug,
    private: row.private === 1,
    maxGames: row.max_games === null ? null : Number(row.max_games),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

type PlayerColumns<C extends string> = {
  [K in `${C}_name` | `${C}_fide_id` | `${C}_country`]: string | null;
} & { [K in `${C}_elo`]: number | null };

function player<C extends 'white' | 'black'>(row: PlayerColumns<C>, color: C): Player {
  const r = row as unknown as Record<string, string | number | null>;
  const elo = r[`${color}_elo`];
  return {
    name: (r[`${color}_name`] as string | null) ?? null,
    elo: elo === null || elo === undefined ? null : Number(elo),
    fideId: (r[`${color}_fide_id`] as string | null) ?? null,
    country: (r[`${color}_country`] as string | null) ?? null,
  };
}

function toSummary(row: Pick<GameRow, (typeof summaryColumns)[number]>): GameSummary {
  return {
    id: row.id,
    slug: row.slug,
    databaseId: row.database_id,
    event: row.event,
    date: row.date,
    result: row.result,
    eco: row.eco,
    white: player(row, 'white'),
    black: player(row, 'black'),
  };
}

function toDetail(row: GameRow): GameDetail {
  return {
    ...toSummary(row),
    fen: row.fen,
    moves: row.moves,
    pgn: row.pgn,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    updatedAt: Number(row.updated_at),
  };
}

const changeColumns = [
  'seq',
  'id',
  'database_id',
  'updated_at',
  'deleted',
  'result',
  ...playerColumns,
] as const;

function toChange(row: Pick<GameRow, (typeof changeColumns)[number]>): GameChange {
  return {
    seq: Number(row.seq),
    id: row.id,
    databaseId: row.database_id,
    updatedAt: Number(row.updated_at),
    deleted: row.deleted === 1,
    result: row.result,
    white: player(row, 'white'),
    black: player(row, 'black'),
  };
}

/**
 * What a deleted game keeps is its feed item: id, database, players, result (and the list fields).
 * Its moves and PGN are dropped: deleted content is not kept.
 */
const TOMBSTONE = { deleted: 1, pgn: '', moves: '', fen: '', metadata: '{}' } as const;

interface LiveGame {
  pk: number;
  id: string;
  owner_id: string;
  database_id: string;
  content_hash: string;
}

function liveGame(db: Executor, id: string): Promise<LiveGame | undefined> {
  return db
    .selectFrom('games')
    .select(['pk', 'id', 'owner_id', 'database_id', 'content_hash'])
    .where('id', '=', id)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

async function changeOf(db: Executor, id: string): Promise<GameChange> {
  return toChange(
    await db.selectFrom('games').select(changeColumns).where('id', '=', id).executeTakeFirstOrThrow(),
  );
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
async function isLive(db: Executor, databaseId: string): Promise<boolean> {
  const row = await db
    .selectFrom('databases')
    .select('id')
    .where('id', '=', databaseId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks a write to the database's games: its time, and its seq for the export's ETag (etags.ts). */
async function touchDatabase(db: Executor, databaseId: string, now: number, seq: number): Promise<void> {
  await db
    .updateTable('databases')
    .set({ updated_at: now, games_seq: seq })
    .where('id', '=', databaseId)
    .execute();
}

function tokenQuery(db: Kysely<DB>) {
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .innerJoin('apps', 'apps.id', 'tokens.app_id')
    .select([
      'tokens.id',
      'tokens.user_id',
      'users.login',
      'tokens.app_id',
      'apps.name as app_name',
      'apps.sector',
      'tokens.scopes',
      'tokens.expires_at',
      'tokens.revoked_at',
      'tokens.created_at',
    ]);
}

/** The reads behind every API request, built once; each returns its rows. */
function hotQueries(db: Kysely<DB>, run: RunQuery) {
  // An offset is walked entry by entry down the (scope, deleted, pk) index (and on PostgreSQL each row
  // skipped is read): `after` lets a page that starts where an earlier one ended seek there instead.
  const liveGames = (scope: 'owner_id' | 'database_id') =>
    prepared(run, 4, (value: string, after: number, limit: number, offset: number) =>
      db
        .selectFrom('games')
        .select([...summaryColumns, 'pk'])
        .where(scope, '=', value)
        .where('deleted', '=', 0)
        .where('pk', '>', after)
        .orderBy('pk')
        .limit(limit)
        .offset(offset),
    );
  return {
    token: prepared(run, 1, (hash: string) => tokenQuery(db).where('tokens.hash', '=', hash)),
    owner_id: liveGames('owner_id'),
    database_id: liveGames('database_id'),
    // The owner's (owner_id, seq) index answers it from its last entry.
    gamesVersion: prepared(run, 1, (ownerId: string) =>
      db
        .selectFrom('games')
        .select((eb) => eb.fn.max('seq').as('version'))
        .where('owner_id', '=', ownerId),
    ),
    game: prepared(run, 2, (ownerId: string, id: string) =>
      db
        .selectFrom('games')
        .selectAll()
        .where('id', '=', id)
        .where('owner_id', '=', ownerId)
        .where('deleted', '=', 0),
    ),
    changes: prepared(run, 3, (ownerId: string, afterSeq: number, limit: number) =>
      db
        .selectFrom('games')
        .select(changeColumns)
        .where('owner_id', '=', ownerId)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .limit(limit),
    ),
  };
}
