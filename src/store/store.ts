// The one interface to the data: every query of the service, scoped by owner, on either dialect. The Store
// opens and closes, runs the write transactions (write) and the reads of every API request (compiled once);
// the rest it hands to a module per resource: accounts.ts (secret, users, apps), tokens.ts, databases.ts,
// games.ts (export), feed.ts, game-writes.ts; OAuth's and the webhooks' parts are objects of their own,
// `store.oauth` (oauth-store.ts) and `store.webhooks` (webhook-store.ts).
import { type Kysely, sql } from 'kysely';
import {
  addApp,
  addUser,
  findApp,
  findAppById,
  findPasswordHash,
  findUser,
  listApps,
  listUsers,
  type NewApp,
  serverSecret,
  setAppClient,
  setPasswordHash,
} from './accounts.ts';
import { beginChanges, type Changes, lastSeq } from './change-allocation.ts';
import { ChangeSignals } from './change-signals.ts';
import type { StoreContext } from './context.ts';
import {
  addDatabase,
  findDatabase,
  findDatabases,
  findOrAddDatabase,
  listDatabases,
  liveGameCount,
  type NewDatabase,
} from './databases.ts';
import { StoreError } from './errors.ts';
import { databaseVersion } from './etags.ts';
import { changePositionAt } from './feed.ts';
import { deleteDatabase, deleteGame, insertGames, moveGame, updateGame } from './game-writes.ts';
import { databasePgn, type ExportOptions, findLiveGame } from './games.ts';
import { hotQueries } from './hot-queries.ts';
import { OAuthStore } from './oauth-store.ts';
import { kyselyRunner, type RunQuery } from './prepared.ts';
import { toChange, toDetail, toExpandedChange, toSummary, toTokenInfo } from './rows.ts';
import type { DB } from './schema.ts';
import { BackgroundCheckpoints } from './sqlite/checkpoints.ts';
import { sqliteHandleOf } from './sqlite/handle.ts';
import { storable } from './storable.ts';
import { issueToken, listTokens, revokeToken } from './tokens.ts';
import { writeTransaction } from './transactions.ts';
import type {
  App,
  BulkWrites,
  Database,
  Dialect,
  ExpandedChange,
  GameChange,
  GameDetail,
  GameRecord,
  InsertOutcome,
  ListedGame,
  OAuthClient,
  Page,
  TokenInfo,
  User,
} from './types.ts';
import { signalling } from './webhook-outbox.ts';
import { WebhookStore } from './webhook-store.ts';

export class Store implements StoreContext {
  /** The connection, for the store's own modules: everything else asks the Store's methods. */
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;

  /** The queries every API request runs, compiled once (prepared.ts). */
  private readonly hot;

  /** The OAuth authorization server's grants, tokens and records (oauth-store.ts). */
  readonly oauth: OAuthStore;

  /** Webhook endpoints, the outbox's fan-out and deliveries (webhook-store.ts). */
  readonly webhooks: WebhookStore;

  private readonly limitSilence: (ms: number) => void;

  /**
   * Signals that a change of an owner may have committed, from this process's writes and (once someone
   * subscribes) from other processes' (change-signals.ts): what a waiting long-poll wakes on.
   */
  readonly signals: ChangeSignals;

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
    signals: ChangeSignals = new ChangeSignals(),
  ) {
    this.db = db;
    this.dialect = dialect;
    this.hot = hotQueries(db, run);
    this.limitSilence = limitSilence;
    this.oauth = new OAuthStore(this);
    this.webhooks = new WebhookStore(this);
    this.signals = signals;
  }

  // ---- the store itself ----------------------------------------------------------------------------

  /**
   * PostgreSQL: from now on, a connection that gets no answer for ms is dropped, and its query fails as a
   * lost connection (postgres/sockets.ts). For the server, whose queries are short; not for a migration or
   * an import, whose statements may rightly run for minutes. SQLite: nothing.
   */
  dropSilentConnections(ms: number): void {
    this.limitSilence(ms);
  }

  /**
   * SQLite: from now on, a statement waits at most ms for a lock that another process holds (busy_timeout),
   * then fails as locked. For the server, which only reads: a WAL reader waits only for a process that holds
   * the store exclusively, and waits synchronously. PostgreSQL: nothing (its lock_timeout is set on opening).
   */
  async limitLockWaits(ms: number): Promise<void> {
    if (this.dialect === 'sqlite') await sql.raw(`pragma busy_timeout = ${ms}`).execute(this.db);
  }

  async close(): Promise<void> {
    await this.signals.close();
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
   * time from `changes` (docs/design.md 18). Every write to games goes through here, and each touches the
   * games of one owner only (a game never changes owner). Why a feed reader never misses a change
   * (docs/design.md 19): the reader pages through one owner's games by seq, a page ends at the highest seq it
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
   *
   * change-allocation.ts takes the seqs and the change time, for this and for the migrations that write
   * changes. A transaction that takes any also records its owner's webhook signal (webhook-outbox.ts).
   */
  async write<T>(ownerId: string, fn: (trx: Kysely<DB>, changes: Changes) => Promise<T>): Promise<T> {
    const result = await this.transact(ownerId, fn);
    // After the commit, never before: a waiter woken now reads what was written. Other processes hear of
    // it from PostgreSQL's NOTIFY (sent by beginChanges, delivered at commit) or SQLite's poller.
    this.signals.committed(ownerId);
    return result;
  }

  private async transact<T>(
    ownerId: string,
    fn: (trx: Kysely<DB>, changes: Changes) => Promise<T>,
  ): Promise<T> {
    // The owner's webhook signal is recorded in the same transaction (webhook-outbox.ts): a write that
    // commits has its signal, one that rolls back has none.
    const run = (trx: Kysely<DB>) => signalling(trx, ownerId, beginChanges(trx, this.dialect, ownerId), fn);
    if (this.dialect === 'postgres') {
      return this.db
        .transaction()
        .execute(run)
        .catch((error: unknown) => {
          // SQLSTATE 22021: text holding U+0000, which PostgreSQL cannot store (SQLite can).
          if ((error as { code?: unknown }).code === '22021') {
            throw new StoreError('the text holds a NUL character (U+0000), which PostgreSQL cannot store');
          }
          throw error;
        });
    }
    return writeTransaction(this.db, 'sqlite', run);
  }

  /**
   * Runs fn in a write transaction that touches no game (OAuth grants and records); on SQLite it holds the
   * write lock from its first statement (transactions.ts).
   */
  async transaction<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    return writeTransaction(this.db, this.dialect, fn);
  }

  /** The highest change sequence value taken so far (on PostgreSQL possibly not committed yet). */
  async lastSeq(): Promise<number> {
    return lastSeq(this.db, this.dialect);
  }

  // ---- server secret, users and apps (ts) -------------------------------------------------

  /** The server secret, created on first use (docs/design.md 24). */
  async serverSecret(): Promise<string> {
    return serverSecret(this.db);
  }

  async addUser(input: { login: string; name?: string; email?: string; image?: string }): Promise<User> {
    return addUser(this.db, input);
  }

  async findUser(login: string): Promise<User | undefined> {
    return findUser(this.db, 'login', login);
  }

  async listUsers(): Promise<User[]> {
    return listUsers(this.db);
  }

  async getUserById(id: string): Promise<User | undefined> {
    return findUser(this.db, 'id', id);
  }

  async addApp(input: NewApp): Promise<App> {
    return addApp(this.db, input);
  }

  async findApp(name: string): Promise<App | undefined> {
    return findApp(this.db, name);
  }

  /** The app with this id (an OAuth client's client_id), and a confidential client's secret hash. */
  async findAppById(id: string): Promise<{ app: App; secretHash: string | null } | undefined> {
    return findAppById(this.db, id);
  }

  /**
   * Makes an app an OAuth client, changes what it is as one, or (client null) makes it none. A confidential
   * client keeps its secret unless a new one's hash is given.
   */
  async setAppClient(appId: string, client: OAuthClient | null, secretHash?: string): Promise<void> {
    return setAppClient(this.db, appId, client, secretHash);
  }

  /**
   * Sets (or with null, removes) the user's password hash and, in the same transaction, ends their sessions:
   * the server's sign-ins and the authorization server's (their records, oauth-records.ts).
   */
  async setPasswordHash(userId: string, hash: string | null): Promise<void> {
    return this.transaction((trx) => setPasswordHash(trx, userId, hash));
  }

  /** The user with this login and their password hash (null: they have none). */
  async findPasswordHash(login: string): Promise<{ user: User; hash: string | null } | undefined> {
    return findPasswordHash(this.db, login);
  }

  async listApps(): Promise<App[]> {
    return listApps(this.db);
  }

  // ---- tokens (ts) --------------------------------------------------------------------------

  /** Issues a token: `cp_` and 256 random bits. Only its SHA-256 is kept. */
  async issueToken(input: {
    userId: string;
    appId: string;
    scopes: string[];
    expiresAt: number | null;
  }): Promise<{ id: string; token: string }> {
    return issueToken(this.db, input);
  }

  /** The token with this SHA-256, whatever its state: the caller checks expiry and revocation. */
  async findTokenByHash(hash: string): Promise<TokenInfo | undefined> {
    const [row] = await this.hot.token(hash);
    return row && toTokenInfo(row);
  }

  async listTokens(): Promise<TokenInfo[]> {
    return listTokens(this.db);
  }

  /** Revokes by token id or by the token itself. Returns the revoked token, undefined when none matched. */
  async revokeToken(tokenOrId: string): Promise<TokenInfo | undefined> {
    return revokeToken(this.db, tokenOrId);
  }

  // ---- databases (ts) --------------------------------------------------------------------

  async addDatabase(input: NewDatabase): Promise<Database> {
    return addDatabase(this, input);
  }

  /**
   * The databases an import names by `ref` (findDatabases), or when there is none, a new one with `ref` as
   * its name, created once however many imports ask at the same time.
   */
  async findOrAddDatabase(
    ownerId: string,
    ref: string,
  ): Promise<{ databases: Database[]; created: boolean }> {
    return findOrAddDatabase(this, ownerId, ref);
  }

  /** The live databases (of one owner, or of all) in creation order. */
  async listDatabases(ownerId?: string): Promise<Database[]> {
    return listDatabases(this.db, ownerId);
  }

  /** One of the owner's live databases by UUID or slug. */
  async findDatabase(ownerId: string, idOrSlug: string): Promise<Database | undefined> {
    return findDatabase(this.db, ownerId, idOrSlug);
  }

  /**
   * For the CLI: the owner's live databases that `ref` names. The one with that id, else the one with that
   * slug and every one with that exact name: names may repeat, a slug may be another's name, and the caller
   * decides what several mean.
   */
  async findDatabases(ownerId: string, ref: string): Promise<Database[]> {
    return findDatabases(this.db, ownerId, ref);
  }

  async countGames(databaseId: string): Promise<number> {
    return liveGameCount(this.db, databaseId);
  }

  /**
   * A number that changes whenever the database's PGN export does, read without reading its games: what
   * the export's ETag is made of (etags.ts).
   */
  async databaseVersion(databaseId: string): Promise<number> {
    return databaseVersion(this.db, databaseId);
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

  /** The owner's live games across all databases: the sum of the databases' kept counts (migration 0011). */
  async gameTotal(ownerId: string): Promise<number> {
    const [row] = await this.hot.gameTotal(ownerId);
    return Number(row?.total ?? 0);
  }

  /** A database's live games, as its row keeps the count (migration 0011); 0 for a deleted one. */
  async databaseGameTotal(databaseId: string): Promise<number> {
    const [row] = await this.hot.databaseGameTotal(databaseId);
    return Number(row?.total ?? 0);
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
   * The id and PGN of every live game of a database in import order, read in batches of at most `batchSize`
   * games and, unless a single game is larger, `batchBytes` bytes (games.ts).
   */
  databasePgn(databaseId: string, options: ExportOptions = {}): AsyncGenerator<{ id: string; pgn: string }> {
    return databasePgn(this.hot, databaseId, options);
  }

  /** A live game by UUID, whoever owns it (the operator's view). */
  async findLiveGame(id: string): Promise<{ id: string; ownerId: string; databaseId: string } | undefined> {
    return findLiveGame(this.db, id);
  }

  // ---- the feed (feed.ts) --------------------------------------------------------------------------

  /** The owner's games (tombstones included) changed after a sequence value, oldest change first. */
  async listChanges(ownerId: string, afterSeq: number, limit: number): Promise<GameChange[]> {
    const rows = await this.hot.changes(ownerId, afterSeq, limit);
    return rows.map(toChange);
  }

  /**
   * listChanges with each live game's detail, as getGame gives it, read by the same statement: one query
   * for the page, and every item and its detail from one snapshot.
   */
  async listExpandedChanges(ownerId: string, afterSeq: number, limit: number): Promise<ExpandedChange[]> {
    const rows = await this.hot.expandedChanges(ownerId, afterSeq, limit);
    return rows.map(toExpandedChange);
  }

  /** The feed position just before the owner's first change at or after a time (feed.ts). */
  async changePositionAt(ownerId: string, sinceMs: number): Promise<number> {
    return changePositionAt(this.db, this.dialect, ownerId, sinceMs);
  }

  // ---- games: writes (game-writes.ts) --------------------------------------------------------------

  /**
   * Adds games to a database in one transaction. A game whose content is already in the database (or
   * earlier in the same batch) is skipped unless allowDuplicates; games beyond maxGames are not added. A
   * database deleted meanwhile takes no more games: StoreError.
   */
  async insertGames(
    database: Database,
    games: GameRecord[],
    allowDuplicates = false,
  ): Promise<InsertOutcome> {
    return insertGames(this, database, games, allowDuplicates);
  }

  /** Replaces a live game's content, keeping its id and database. Undefined when there is no such game. */
  async updateGame(id: string, game: GameRecord): Promise<GameChange | undefined> {
    return updateGame(this, id, game);
  }

  /**
   * Moves a live game to another live database of the same owner. Undefined when there is no such game;
   * moved false (and no write) when it is already there. A full target (maxGames) is refused.
   */
  async moveGame(
    id: string,
    target: Database,
  ): Promise<{ change: GameChange; fromDatabaseId: string; moved: boolean } | undefined> {
    return moveGame(this, id, target);
  }

  /** Turns a live game into a tombstone (docs/design.md 22). Undefined when there is no such game. */
  async deleteGame(id: string): Promise<GameChange | undefined> {
    return deleteGame(this, id);
  }

  /**
   * Deletes a live database: each of its games becomes a tombstone with a change of its own, and the
   * database disappears (its id and slug stay taken). Undefined when it is already gone.
   */
  async deleteDatabase(database: Database): Promise<{ tombstoned: number; deletedAt: number } | undefined> {
    return deleteDatabase(this, database);
  }
}
