// One run of the sync, the reference consumer of the changes feed (spec "What the service does"), in steps
// that share the run's state: `open` checks the token and whose mirror it is, then claims the mirror;
// `takeOver` (a first run) reads every game from the NDJSON export of /games, one snapshot of the server's
// store, and stores the feed cursor after that snapshot (X-Changes-Cursor) once the last game is in;
// `catchUp` follows the feed from the saved cursor to its end, each changed game's detail in its item
// (expand=game: one request per page), deleting tombstoned games and storing each page's cursor in the same
// transaction as its data; `settle` makes the mirror current (the databases read again, the PGN files);
// `watch` follows the feed with long-polls. An item without its game (an older server, which refuses expand,
// or a proxy that drops it) is read from the game's detail endpoint instead. syncMirror (engine.ts) opens the
// folder, its lock and the mirror, and calls `run`; a test can call each step alone.
import {
  type Change,
  type ChangesPage,
  type ChangesQuery,
  ChessportClient,
  ChessportError,
  type GameDetail,
  type GameExport,
  type RetryOptions,
} from '@chessport/client';
import { mapConcurrent } from './concurrent.ts';
import { authFailure, cursorRejected } from './errors.ts';
import { isLoopback } from './loopback.ts';
import type { Mirror } from './mirror.ts';
import { DEFAULT_WAIT_SECONDS, type SyncOptions, type SyncProgress, type SyncSummary } from './options.ts';
import { checkReader, checkServer } from './owner.ts';
import { writePgnFiles } from './pgn-files.ts';
import { RetryTally } from './retries.ts';
import { SyncSignIn } from './sign-in.ts';
import { TAKE_OVER_WORKER, TakeOverWriter, type WrittenBatch } from './takeover-writer.ts';

/** What a run is asked to do: syncMirror's options but the folder, whose files it is given instead. */
export type RunOptions = Omit<SyncOptions, 'out'>;

/** The files of the folder besides the mirror. */
export interface RunFiles {
  /** The sign-in kept for runs without a token (TOKENS_FILE). */
  tokens: string;
  /** Where the PGN files go, with `pgnFiles` (PGN_FOLDER). */
  pgnFolder: string;
}

/** A run's summary but its time, which syncMirror measures. */
export type RunSummary = Omit<SyncSummary, 'elapsedMs'>;

/** A feed item with its game (expand), or without it (an older server, or a proxy that dropped it). */
export type ItemOfPage = Change & { game?: GameDetail | null };

/** The default feed page size, the most the server gives. */
const PAGE_SIZE = 500;
/**
 * Games of a take-over's export written per transaction, by default (`pageSize` when it is given): its
 * commits need not reach the disk (Mirror.beginTakeOver), so fewer and larger ones cost less.
 */
const TAKE_OVER_BATCH = 2000;
/**
 * Games of a take-over written between two checkpoints of the mirror's WAL: about 14 MB, the 1,000 pages at
 * which SQLite would checkpoint by itself.
 */
const CHECKPOINT_GAMES = 8000;
/** Game details read at the same time, by default. */
const CONCURRENCY = 4;

export class SyncRun {
  /** The run's client: fails as the client does once its retries are spent. */
  readonly api: ChessportClient;
  /** The long-polls' client: once caught up, a watch outlives a server's restart, so it retries for as long as it takes. */
  readonly #watcher: ChessportClient;
  readonly #options: RunOptions;
  readonly #mirror: Mirror;
  readonly #files: RunFiles;
  /** The sign-in a run without a token uses: --login's, or the one kept in the folder. */
  readonly #signIn: SyncSignIn | undefined;
  readonly #retries = new RetryTally();
  readonly #progress: SyncProgress = { pages: 0, changes: 0, gamesUpserted: 0, gamesDeleted: 0 };
  #detailRequests = 0;
  #exportedGames = 0;
  /** Games of the take-over written since the mirror's WAL was last checkpointed. */
  #sinceCheckpoint = 0;
  /** Until the server refuses it (an older one): then every game of the run comes from its detail endpoint. */
  #expand: 'game' | undefined = 'game';
  /** The cursor the mirror had saved when the run opened it: the run continues from there. */
  #saved: string | undefined;
  /** Pages applied since the mirror was last current (its PGN files written). */
  #unsettled = false;
  #pgnFiles: string[] = [];

  constructor(options: RunOptions, mirror: Mirror, files: RunFiles) {
    this.#options = options;
    this.#mirror = mirror;
    this.#files = files;
    const http = {
      ...(options.fetch && { fetch: options.fetch }),
      ...(options.userAgent !== undefined && { userAgent: options.userAgent }),
    };
    this.#signIn = options.token === undefined ? new SyncSignIn(files.tokens, http) : undefined;
    this.api = this.#client({ ...options.retry });
    this.#watcher = this.#client({ ...options.retry, maxRetries: Number.POSITIVE_INFINITY });
  }

  /** The steps in turn: the mirror current with the server, and with `watch` kept so until the signal aborts. */
  async run(): Promise<RunSummary> {
    const start = await this.open();
    try {
      const fresh = start.cursor === undefined && start.since === undefined;
      const exported = fresh ? await this.takeOver() : undefined;
      const cursor = await this.catchUp(exported === undefined ? start : { cursor: exported });
      await this.settle();
      if (this.#options.watch) await this.watch(cursor);
    } catch (error) {
      // With watch, the signal is how the run ends: an abort then stops it at a page boundary, with the summary.
      if (!(this.#options.watch && this.#options.signal?.aborted)) throw error;
    }
    // Stopped part-way (watch): the PGN files follow the mirror, which is whole up to its last page.
    if (this.#unsettled && this.#options.pgnFiles) this.#writePgnFiles();
    return this.summary();
  }

  /**
   * The first step, which writes nothing before the token is known to work and to be the mirror's reader's:
   * checks the server the mirror follows, signs in (or loads the kept sign-in), asks /me whose the token is
   * and checks that against the mirror's reader, keeps a new sign-in, lets the server judge `since`, then
   * claims the mirror (or starts it over, with `full`) with the server's databases. Returns where the feed
   * starts: the saved cursor, or `since` (undefined: the whole feed).
   */
  async open(): Promise<ChangesQuery> {
    const { signal, since } = this.#options;
    const full = Boolean(this.#options.full);
    const mirror = this.#mirror;
    this.#saved = full ? undefined : mirror.getState('cursor');
    if (this.#saved !== undefined && since !== undefined) {
      throw new Error('--since only applies to a first run: this mirror continues from its saved cursor');
    }
    checkServer(mirror, this.api.apiBase, full);
    if (this.#signIn && this.#options.login)
      await this.#signIn.login(this.api.apiBase, this.#options.login, signal);
    else this.#signIn?.load(this.api.apiBase);
    const reader = (await this.#call(() => this.api.me({ signal }))).id;
    await checkReader(mirror, reader, {
      full,
      switchReader: Boolean(this.#options.switchReader),
      cursorAccepted: (cursor) =>
        this.#call(() => this.api.changes({ cursor, limit: 1 }, { signal })).then(
          () => true,
          (error: unknown) => {
            if (cursorRejected(error)) return false;
            throw error;
          },
        ),
    });
    // A new sign-in is kept once its reader may write here: another user's would stand in the mirror's way.
    this.#signIn?.keep();
    // The server judges `since`; asked before the claim, so that a mistyped time leaves the folder unbound.
    if (this.#saved === undefined && since !== undefined) {
      await this.#call(() => this.api.changes({ since, limit: 1 }, { signal }));
    }
    const databases = await this.#call(() => this.api.databases({ signal }));
    const owner = { baseUrl: this.api.apiBase, reader };
    if (full) mirror.startOver(owner);
    else mirror.claim(owner);
    mirror.putDatabases(databases, false);
    return this.#saved !== undefined ? { cursor: this.#saved } : { since };
  }

  /**
   * A first run's take-over: every game of the user from the NDJSON export of /games, written 2,000 (or
   * `pageSize`) to a transaction as it streams in, then the export's X-Changes-Cursor stored, which is where the feed
   * continues: exactly after the export's snapshot. One export of /games rather than one per database: one
   * snapshot and one cursor, where several exports would each have their own, and one heavy request. An
   * interrupted take-over leaves the mirror without a cursor, and the next run starts it again (the export
   * cannot be continued part-way): the games it wrote go first, since some may have been deleted since.
   * Returns the cursor; undefined, having written nothing, from a server without the export (it refuses
   * format=ndjson or sends no cursor), whose games then come through the feed from its beginning.
   */
  async takeOver(): Promise<string | undefined> {
    const { signal } = this.#options;
    let exported: GameExport;
    try {
      exported = await this.#call(() => this.api.exportNdjson({}, { signal }));
    } catch (error) {
      if (noExport(error)) return undefined;
      throw error;
    }
    const { cursor } = exported;
    if (cursor === null) {
      await exported.cancel();
      return undefined;
    }
    this.#mirror.beginTakeOver();
    // The lines go as text to the writer thread, which parses and writes them while this one downloads.
    const writer = new TakeOverWriter(this.#mirror.file, this.#options.workerUrl?.(TAKE_OVER_WORKER));
    try {
      const batchSize = this.#options.pageSize ?? TAKE_OVER_BATCH;
      let batch: string[] = [];
      for await (const lines of exported.lines()) {
        for (const line of lines) batch.push(line);
        if (batch.length < batchSize) continue;
        await this.#exportedWritten(await writer.write(batch));
        batch = [];
      }
      if (batch.length > 0) await this.#exportedWritten(await writer.write(batch));
      await this.#exportedWritten(await writer.finish());
    } finally {
      await writer.stop();
    }
    this.#mirror.finishTakeOver(cursor);
    return cursor;
  }

  /**
   * Applies the feed's pages from `start` until one says it is the last, and returns that page's cursor. One
   * page is read ahead: the server builds the next page while this one is written. A page's cursor is still
   * stored only with the page's own data.
   */
  async catchUp(start: ChangesQuery): Promise<string> {
    const limit = this.#pageSize;
    let ahead = this.#readAhead({ ...start, limit }, true);
    try {
      for (;;) {
        const page = await ahead.page;
        if (page.hasMore) ahead = this.#readAhead({ cursor: page.nextCursor, limit }, false);
        await this.apply(page);
        if (!page.hasMore) return page.nextCursor;
      }
    } finally {
      // A read still running when the run fails is stopped and awaited, so that none outlives the run.
      await ahead.stop();
    }
  }

  /**
   * The mirror current at the end of the feed: the databases read again (those deleted meanwhile leave it;
   * their games left through their tombstones), the PGN files written, and onCurrent told.
   */
  async settle(): Promise<void> {
    const { signal } = this.#options;
    this.#mirror.putDatabases(await this.#call(() => this.api.databases({ signal })), true);
    if (this.#options.pgnFiles) this.#writePgnFiles();
    this.#unsettled = false;
    const counts = this.#mirror.counts();
    this.#options.onCurrent?.({
      ...this.#progress,
      mirrorGames: counts.games,
      mirrorDatabases: counts.databases,
    });
  }

  /**
   * Follows the feed from `from` with long-polls until the signal aborts (then it throws the signal's reason):
   * each page with changes is applied as it comes, and the mirror settles at the end of each burst.
   */
  async watch(from: string): Promise<never> {
    const wait = this.#options.waitSeconds ?? DEFAULT_WAIT_SECONDS;
    let at = from;
    for (;;) {
      const page = await this.readPage({ cursor: at, limit: this.#pageSize, wait });
      if (page.data.length > 0) await this.apply(page);
      at = page.nextCursor;
      if (!page.hasMore && this.#unsettled) await this.settle();
    }
  }

  /**
   * One feed page, with its games while the server takes expand; a long-poll (`wait`) through the watch's
   * client. A 400 to expand (an older server) drops expand for the rest of the run and asks again; a 400 to
   * `wait` says that --watch cannot follow this server. `first`: the page the run starts with, whose 400 is
   * the saved cursor's (cursor_rejected) when the run continues from one.
   */
  async readPage(
    query: ChangesQuery,
    signal = this.#options.signal,
    first = false,
  ): Promise<ChangesPage<ItemOfPage>> {
    const client = query.wait !== undefined ? this.#watcher : this.api;
    for (;;) {
      try {
        return await this.#call(() => client.changes({ ...query, expand: this.#expand }, { signal }));
      } catch (error) {
        if (this.#expand !== undefined && refused(error, 'expand')) {
          this.#expand = undefined;
          continue;
        }
        if (query.wait !== undefined && refused(error, 'wait'))
          throw new Error(
            'the server does not hold requests for changes (wait), so --watch cannot follow it: upgrade ' +
              'the server, or run the sync without --watch, as often as needed',
            { cause: error },
          );
        throw (first && this.#saved !== undefined && cursorRejected(error)) || error;
      }
    }
  }

  /**
   * Applies one page: reads the details its live items lack (none from a server that takes expand), then
   * writes the games, the deletions and the page's cursor in one transaction, and counts them.
   */
  async apply(page: ChangesPage<ItemOfPage>): Promise<void> {
    const details = await this.#details(page.data);
    // In page order: the mirror keeps the order in which it first received the games (the PGN files' order).
    const upserts: GameDetail[] = [];
    const deletes: string[] = [];
    for (const change of page.data) {
      const game = change.deleted ? null : (change.game ?? details.get(change.id) ?? null);
      if (game) upserts.push(game);
      else deletes.push(change.id);
    }
    await this.#knowDatabases(upserts);
    this.#mirror.applyPage({ upserts, deletes, cursor: page.nextCursor });
    this.#progress.pages++;
    this.#progress.changes += page.data.length;
    this.#progress.gamesUpserted += upserts.length;
    this.#progress.gamesDeleted += deletes.length;
    this.#unsettled = true;
    this.#options.onPage?.({ ...this.#progress });
  }

  /**
   * Batches of the take-over's export that the writer thread wrote: counted, and the databases of their games
   * known (without a cursor: the take-over stores it at its end).
   */
  async #exportedWritten(batches: WrittenBatch[]): Promise<void> {
    for (const { written, databaseIds } of batches) {
      this.#sinceCheckpoint += written;
      if (this.#sinceCheckpoint >= CHECKPOINT_GAMES) {
        this.#mirror.checkpoint();
        this.#sinceCheckpoint = 0;
      }
      await this.#knowDatabaseIds(databaseIds);
      this.#progress.gamesUpserted += written;
      this.#exportedGames += written;
      this.#unsettled = true;
      this.#options.onPage?.({ ...this.#progress });
    }
  }

  /** A game in a database created after the list was read (or moved into one): the list read again first. */
  async #knowDatabases(games: GameDetail[]): Promise<void> {
    await this.#knowDatabaseIds(games.map((game) => game.databaseId));
  }

  async #knowDatabaseIds(ids: string[]): Promise<void> {
    const { signal } = this.#options;
    const known = this.#mirror.databaseIds();
    if (ids.some((id) => !known.has(id))) {
      this.#mirror.putDatabases(await this.#call(() => this.api.databases({ signal })), false);
    }
  }

  /** The run's figures so far, and what the mirror holds. */
  summary(): RunSummary {
    const counts = this.#mirror.counts();
    return {
      mirror: this.#mirror.file,
      resumed: this.#saved !== undefined,
      ...this.#progress,
      mirrorGames: counts.games,
      mirrorDatabases: counts.databases,
      ...this.#retries.figures(),
      detailRequests: this.#detailRequests,
      exportedGames: this.#exportedGames,
      pgnFiles: this.#pgnFiles,
    };
  }

  get #pageSize(): number {
    return this.#options.pageSize ?? PAGE_SIZE;
  }

  /** A client of the run's server, token and settings, with `retry` over the run's retry policy. */
  #client(retry: RetryOptions): ChessportClient {
    const options = this.#options;
    return new ChessportClient({
      baseUrl: options.baseUrl,
      token: options.token ?? (this.#signIn as SyncSignIn),
      ...(options.fetch && { fetch: options.fetch }),
      ...(options.userAgent !== undefined && { userAgent: options.userAgent }),
      compression: options.compression ?? !isLoopback(options.baseUrl),
      // A sync waits out any rate limit (docs/design.md 25); it never fails because of one.
      retry: { maxRateLimitRetries: Number.POSITIVE_INFINITY, maxRateLimitWaitMs: 3_600_000, ...retry },
      onRetry: (event) => {
        this.#retries.count(event);
        options.onRetry?.(event);
      },
    });
  }

  /** A request whose 401 or 403 (or refused refresh token) is the SyncError that stops the run. */
  async #call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw authFailure(error) ?? error;
    }
  }

  /** A feed page being read, and how to stop the read: its failure is the run's only once it is awaited. */
  #readAhead(query: ChangesQuery, first: boolean) {
    const { signal } = this.#options;
    const stop = new AbortController();
    const page = this.readPage(query, signal ? AbortSignal.any([signal, stop.signal]) : stop.signal, first);
    const settled = page.then(
      () => undefined,
      () => undefined,
    );
    return {
      page,
      stop: async () => {
        stop.abort(new Error('the sync stopped'));
        await settled;
      },
    };
  }

  /**
   * The details of the live items that came without their game, by id, read `concurrency` at a time; null
   * for a game deleted since the page was read.
   */
  async #details(changes: ItemOfPage[]): Promise<Map<string, GameDetail | null>> {
    const missing = changes.filter((change) => !change.deleted && !change.game);
    this.#detailRequests += missing.length;
    const concurrency = this.#options.concurrency ?? CONCURRENCY;
    const fetched = await mapConcurrent(missing, concurrency, this.#options.signal, async (change, each) => {
      try {
        return await this.#call(() => this.api.game(change.id, { signal: each }));
      } catch (error) {
        // Deleted since the page was read: its tombstone is further on in the feed; delete it now. Only
        // the API's own not_found says so: a proxy's 404 page would drop a live game from the mirror for
        // good (the cursor moves past it), so it fails the run, and the next run repeats the page.
        if (error instanceof ChessportError && error.status === 404 && error.error === 'not_found')
          return null;
        throw error;
      }
    });
    return new Map(missing.map((change, i) => [change.id, fetched[i] ?? null]));
  }

  #writePgnFiles(): void {
    this.#pgnFiles = writePgnFiles(this.#mirror, this.#files.pgnFolder);
  }
}

/**
 * A server without the NDJSON export: an older chessport refuses format=ndjson with 400 (its strict format
 * takes pgn only); anything that answers other than NDJSON is taken for one too.
 */
function noExport(error: unknown): boolean {
  return (
    refused(error, 'format') ||
    (error instanceof ChessportError &&
      error.error === 'unexpected_response' &&
      /not NDJSON/.test(error.message))
  );
}

/** The server's 400 to a parameter (expand, wait): an older chessport, whose strict parameters do not know it. */
function refused(error: unknown, parameter: 'expand' | 'wait' | 'format'): boolean {
  return (
    error instanceof ChessportError &&
    error.status === 400 &&
    error.error === 'invalid_request' &&
    new RegExp(`\\b${parameter}\\b`).test(error.error_description)
  );
}
