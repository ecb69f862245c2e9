// The one interface to the data: every query of the service, scoped by owner, on either dialect.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Dialect } from './migrations.ts';
import type { DB, GamesTable } from './schema.ts';
import { gameSlug, slugify } from './slug.ts';
import type {
  App,
  Database,
  GameChange,
  GameDetail,
  GameRecord,
  GameSummary,
  InsertOutcome,
  Page,
  Player,
  TokenInfo,
  User,
} from './types.ts';

export class StoreError extends Error {}

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
  'white_name',
  'white_elo',
  'white_fide_id',
  'white_country',
  'black_name',
  'black_elo',
  'black_fide_id',
  'black_country',
] as const;

// Rows per multi-row INSERT: well under SQLite's bound-parameter limit with 27 columns.
const INSERT_CHUNK = 200;

export class Store {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;

  constructor(db: Kysely<DB>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /** A cheap query that fails when the store is unreachable. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /**
   * Runs fn in a write transaction. On SQLite it begins IMMEDIATE, taking the write lock before any read,
   * so concurrent writer processes queue on busy_timeout instead of failing on a stale snapshot, and
   * write transactions commit one at a time in the order they took the lock.
   */
  async write<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    if (this.dialect !== 'sqlite') return this.db.transaction().execute(fn);
    return this.db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      try {
        const result = await fn(conn);
        await sql`commit`.execute(conn);
        return result;
      } catch (error) {
        await sql`rollback`.execute(conn);
        throw error;
      }
    });
  }

  /** Takes n values of the change sequence; returns the first. Must run inside write(). */
  private async nextSeq(trx: Executor, n: number): Promise<number> {
    const row = await trx
      .updateTable('sequences')
      .set({ value: sql`value + ${n}` })
      .where('name', '=', 'change')
      .returning('value')
      .executeTakeFirstOrThrow();
    return Number(row.value) - n + 1;
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
      .execute();
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
      .execute();
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
    return this.db
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

  /** The token with this SHA-256, whatever its state: the caller checks expiry and revocation. */
  async findTokenByHash(hash: string): Promise<TokenInfo | undefined> {
    const row = await this.tokenQuery().where('tokens.hash', '=', hash).executeTakeFirst();
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
    return this.write(async (trx) => {
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

  async countGames(databaseId: string): Promise<number> {
    const row = await this.db
      .selectFrom('games')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // ---- games: writes -------------------------------------------------------------------------------

  /**
   * Adds games to a database in one transaction. A game whose content is already in the database (or
   * earlier in the same batch) is skipped unless allowDuplicates; games beyond maxGames are not added.
   */
  async insertGames(
    database: Database,
    games: GameRecord[],
    allowDuplicates = false,
  ): Promise<InsertOutcome> {
    return this.write(async (trx) => {
      let fresh = games;
      let duplicates = 0;
      if (!allowDuplicates) {
        const hashes = [...new Set(games.map((g) => g.contentHash))];
        const existing = new Set<string>();
        for (let i = 0; i < hashes.length; i += 500) {
          const rows = await trx
            .selectFrom('games')
            .select('content_hash')
            .where('database_id', '=', database.id)
            .where('deleted', '=', 0)
            .where('content_hash', 'in', hashes.slice(i, i + 500))
            .execute();
          for (const row of rows) existing.add(row.content_hash);
        }
        fresh = games.filter((g) => {
          if (existing.has(g.contentHash)) return false;
          existing.add(g.contentHash);
          return true;
        });
        duplicates = games.length - fresh.length;
      }
      let overLimit = 0;
      if (database.maxGames !== null) {
        const count = Number(
          (
            await trx
              .selectFrom('games')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('database_id', '=', database.id)
              .where('deleted', '=', 0)
              .executeTakeFirstOrThrow()
          ).n,
        );
        const room = Math.max(0, database.maxGames - count);
        overLimit = Math.max(0, fresh.length - room);
        fresh = fresh.slice(0, room);
      }
      const ids: string[] = [];
      if (fresh.length > 0) {
        const firstSeq = await this.nextSeq(trx, fresh.length);
        const now = Date.now();
        const rows = fresh.map((game, i) => {
          const id = randomUUID();
          ids.push(id);
          return toRow(game, {
            id,
            ownerId: database.ownerId,
            databaseId: database.id,
            seq: firstSeq + i,
            now,
          });
        });
        for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
          await trx
            .insertInto('games')
            .values(rows.slice(i, i + INSERT_CHUNK))
            .execute();
        }
        await trx.updateTable('databases').set({ updated_at: now }).where('id', '=', database.id).execute();
      }
      return { inserted: fresh.length, duplicates, overLimit, ids };
    });
  }

  // ---- games: reads --------------------------------------------------------------------------------

  /** The owner's live games across all databases, in import order. */
  async listGames(ownerId: string, page: Page): Promise<GameSummary[]> {
    const rows = await this.db
      .selectFrom('games')
      .select(summaryColumns)
      .where('owner_id', '=', ownerId)
      .where('deleted', '=', 0)
      .orderBy('pk')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return rows.map(toSummary);
  }

  /** One database's live games, in import order. */
  async listDatabaseGames(databaseId: string, page: Page): Promise<GameSummary[]> {
    const rows = await this.db
      .selectFrom('games')
      .select(summaryColumns)
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .orderBy('pk')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return rows.map(toSummary);
  }

  /** One of the owner's live games by UUID. */
  async getGame(ownerId: string, id: string): Promise<GameDetail | undefined> {
    const row = await this.db
      .selectFrom('games')
      .selectAll()
      .where('id', '=', id)
      .where('owner_id', '=', ownerId)
      .where('deleted', '=', 0)
      .executeTakeFirst();
    return row && toDetail(row);
  }

  /** The PGN of every live game of a database in import order, read in keyset batches (constant memory). */
  async *databasePgn(databaseId: string, batchSize = 1000): AsyncGenerator<string> {
    let after = 0;
    for (;;) {
      const rows = await this.db
        .selectFrom('games')
        .select(['pk', 'pgn'])
        .where('database_id', '=', databaseId)
        .where('deleted', '=', 0)
        .where('pk', '>', after)
        .orderBy('pk')
        .limit(batchSize)
        .execute();
      for (const row of rows) yield row.pgn;
      const last = rows.at(-1);
      if (!last || rows.length < batchSize) return;
      after = Number(last.pk);
    }
  }

  /** The owner's games (tombstones included) changed after a sequence value, oldest change first. */
  async listChanges(ownerId: string, afterSeq: number, limit: number): Promise<GameChange[]> {
    const rows = await this.db
      .selectFrom('games')
      .select([
        'seq',
        'id',
        'database_id',
        'updated_at',
        'deleted',
        'result',
        'white_name',
        'white_elo',
        'white_fide_id',
        'white_country',
        'black_name',
        'black_elo',
        'black_fide_id',
        'black_country',
      ])
      .where('owner_id', '=', ownerId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      seq: Number(row.seq),
      id: row.id,
      databaseId: row.database_id,
      updatedAt: Number(row.updated_at),
      deleted: row.deleted === 1,
      result: row.result,
      white: player(row, 'white'),
      black: player(row, 'black'),
    }));
  }
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

function toRow(
  game: GameRecord,
  at: { id: string; ownerId: string; databaseId: string; seq: number; now: number },
): Omit<GameRow, 'pk'> {
  return {
    id: at.id,
    owner_id: at.ownerId,
    database_id: at.databaseId,
    slug: gameSlug(game.white.name, game.black.name, game.date, at.id),
    seq: at.seq,
    event: game.event,
    date: game.date,
    result: game.result,
    eco: game.eco,
    white_name: game.white.name,
    white_elo: game.white.elo,
    white_fide_id: game.white.fideId,
    white_country: game.white.country,
    black_name: game.black.name,
    black_elo: game.black.elo,
    black_fide_id: game.black.fideId,
    black_country: game.black.country,
    metadata: JSON.stringify(game.metadata),
    moves: game.moves,
    fen: game.fen,
    pgn: game.pgn,
    content_hash: game.contentHash,
    created_at: at.now,
    updated_at: at.now,
    deleted: 0,
  };
}
