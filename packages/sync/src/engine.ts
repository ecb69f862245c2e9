// The reference consumer of the changes feed (spec "What the service does"): follow the feed from the saved
// cursor with each changed game's detail in its item (expand=game: one request per page), delete tombstoned
// games, and store the cursor in the same transaction as its page's data. An item without its game (an older
// server, which refuses expand, or a proxy that drops it) is read from the game's detail endpoint instead.
// Databases are read from /databases on every run.
import { join, resolve } from 'node:path';
import {
  type Change,
  type ChangesPage,
  type ChangesQuery,
  ChessportClient,
  ChessportError,
  type GameDetail,
  type RetryEvent,
  type RetryOptions,
  type RetryPolicy,
} from '@chessport/client';
import { mapConcurrent } from './concurrent.ts';
import { authFailure, cursorRejected, SyncError } from './errors.ts';
import { FolderBusyError, type FolderLock, lockFolder } from './lock.ts';
import { isLoopback } from './loopback.ts';
import { Mirror } from './mirror.ts';
import { checkReader, checkServer } from './owner.ts';
import { writePgnFiles } from './pgn-files.ts';
import { makePrivateFolder } from './private-files.ts';
import { TOKENS_FILE } from './saved-sign-in.ts';
import { type LoginOptions, SyncSignIn } from './sign-in.ts';

export const MIRROR_FILE = 'mirror.sqlite';
/** With watch: how long each long-poll may be held, by default (the server takes 1 to 60). */
export const DEFAULT_WAIT_SECONDS = 30;
export const LOCK_FILE = 'sync.lock';
export const PGN_FOLDER = 'pgn';

export interface SyncOptions {
  /** The service's address, like https://chess.example.org. */
  baseUrl: string;
  /**
   * Needs the scopes user.read, games.read and databases.read. Without it, the run signs in through the
   * device flow (`login`), or uses the sign-in kept in the folder (TOKENS_FILE), refreshing it as needed.
   */
  token?: string | undefined;
  /** Sign in through the device flow first; the tokens are kept in the folder once they prove the reader's. */
  login?: LoginOptions | undefined;
  /** Folder of the mirror; created when missing. */
  out: string;
  /** Feed page size, 1 to 500 (default 500). */
  pageSize?: number;
  /** Game details fetched at the same time, for items that come without their game (default 4). */
  concurrency?: number;
  /** Also write one PGN file per database into <out>/pgn. */
  pgnFiles?: boolean;
  /** Start over: empty the mirror and read the whole feed again; for the mirror's own reader only. */
  full?: boolean;
  /**
   * With `full`: the mirror may become the token's reader's although another reader made it (another user
   * or app, or the server's secret changed). Without it, a token of another reader is refused (owner.ts).
   */
  switchReader?: boolean;
  /** First run only: start at the changes made at or after this time instead of a full backfill. */
  since?: string;
  /**
   * Keep the mirror current until `signal` aborts: once caught up, follow the feed with long-polls and apply
   * each change as it commits. The abort then ends the run as its end does (with the summary), at a page
   * boundary, not as an interruption; network failures and 503s once caught up are retried for as long as
   * it takes (a server restarting).
   */
  watch?: boolean;
  /** With watch: seconds the server may hold each long-poll, 1 to 60 (default DEFAULT_WAIT_SECONDS). */
  waitSeconds?: number;
  /** Each time the mirror is current: at the end of the feed, and with watch after each burst of changes. */
  onCurrent?: (current: SyncCurrent) => void;
  signal?: AbortSignal;
  retry?: Partial<RetryPolicy>;
  onRetry?: (event: RetryEvent) => void;
  onPage?: (progress: SyncProgress) => void;
  fetch?: typeof fetch;
  /** The User-Agent of every request (the client's default: chessport-client/<version>). */
  userAgent?: string;
  /**
   * Whether to ask for compressed answers. Default: yes, unless the server is on this machine (a loopback
   * address or localhost), where compressing costs CPU on both sides and saves nothing.
   */
  compression?: boolean;
}

export interface SyncProgress {
  pages: number;
  changes: number;
  gamesUpserted: number;
  /** Tombstones applied (a game deleted on the server, whether or not the mirror had it). */
  gamesDeleted: number;
}

/** The mirror, current with the server: the run's progress so far and what the mirror holds. */
export interface SyncCurrent extends SyncProgress {
  mirrorGames: number;
  mirrorDatabases: number;
}

export interface SyncSummary extends SyncProgress {
  mirror: string;
  /** Whether the run continued from a saved cursor (false: a first run or a start over). */
  resumed: boolean;
  mirrorGames: number;
  mirrorDatabases: number;
  /** Requests refused with 429 and retried after waiting. */
  rateLimitWaits: number;
  /** Wall-clock time spent waiting on the rate limit. */
  rateLimitWaitMs: number;
  /** Retries after 503, gateway errors or network failures. */
  retries: number;
  /** Games read from their detail endpoint because their feed item came without them (an older server). */
  detailRequests: number;
  pgnFiles: string[];
  elapsedMs: number;
}

export async function syncMirror(options: SyncOptions): Promise<SyncSummary> {
  const started = performance.now();
  if (options.switchReader && !options.full) {
    throw new Error('--switch-reader goes with --full: a mirror that changes reader starts over');
  }
  const out = resolve(options.out);
  makePrivateFolder(out);
  let lock: FolderLock;
  try {
    lock = lockFolder(join(out, LOCK_FILE));
  } catch (error) {
    if (error instanceof FolderBusyError) throw new SyncError('busy', error.message, { cause: error });
    throw error;
  }
  try {
    const mirror = new Mirror(join(out, MIRROR_FILE));
    try {
      const summary = await run(options, mirror, join(out, TOKENS_FILE), join(out, PGN_FOLDER));
      return { ...summary, elapsedMs: Math.round(performance.now() - started) };
    } finally {
      mirror.close();
    }
  } finally {
    lock.release();
  }
}

async function run(
  options: SyncOptions,
  mirror: Mirror,
  tokensFile: string,
  pgnFolder: string,
): Promise<Omit<SyncSummary, 'elapsedMs'>> {
  const { signal } = options;
  // With watch, the signal is how the run ends: an abort then stops it at a page boundary, with the summary.
  const stopped = () => Boolean(options.watch && signal?.aborted);
  const progress: SyncProgress = { pages: 0, changes: 0, gamesUpserted: 0, gamesDeleted: 0 };
  const waits = { rateLimitWaits: 0, rateLimitWaitMs: 0, retries: 0 };
  let detailRequests = 0;
  let waitingUntil = 0;
  const http = {
    ...(options.fetch && { fetch: options.fetch }),
    ...(options.userAgent !== undefined && { userAgent: options.userAgent }),
  };
  const signIn = options.token === undefined ? new SyncSignIn(tokensFile, http) : undefined;
  const client = (retry: RetryOptions) =>
    new ChessportClient({
      baseUrl: options.baseUrl,
      token: options.token ?? (signIn as SyncSignIn),
      ...http,
      compression: options.compression ?? !isLoopback(options.baseUrl),
      // A sync waits out any rate limit (docs/design.md 25); it never fails because of one.
      retry: { maxRateLimitRetries: Number.POSITIVE_INFINITY, maxRateLimitWaitMs: 3_600_000, ...retry },
      onRetry: (event) => {
        if (event.reason === 'rate_limited') {
          waits.rateLimitWaits++;
          // Wall-clock time: parallel requests wait together, so only the part past the current wait counts.
          const now = performance.now();
          const until = now + event.waitMs;
          waits.rateLimitWaitMs += Math.max(0, until - Math.max(now, waitingUntil));
          waitingUntil = Math.max(waitingUntil, until);
        } else {
          waits.retries++;
        }
        options.onRetry?.(event);
      },
    });
  const api = client({ ...options.retry });
  // Once caught up, a watch outlives a server's restart: its long-polls retry failures for as long as it takes.
  const watcher = client({ ...options.retry, maxRetries: Number.POSITIVE_INFINITY });
  const call = async <T>(request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (error) {
      throw authFailure(error) ?? error;
    }
  };

  // Nothing is written before the token is known to work and to be the mirror's reader's.
  const full = Boolean(options.full);
  const saved = full ? undefined : mirror.getState('cursor');
  if (saved !== undefined && options.since !== undefined) {
    throw new Error('--since only applies to a first run: this mirror continues from its saved cursor');
  }
  checkServer(mirror, api.apiBase, full);
  if (signIn && options.login) await signIn.login(api.apiBase, options.login, signal);
  else signIn?.load(api.apiBase);
  const reader = (await call(() => api.me({ signal }))).id;
  await checkReader(mirror, reader, {
    full,
    switchReader: Boolean(options.switchReader),
    cursorAccepted: (cursor) =>
      call(() => api.changes({ cursor, limit: 1 }, { signal })).then(
        () => true,
        (error: unknown) => {
          if (cursorRejected(error)) return false;
          throw error;
        },
      ),
  });
  // A new sign-in is kept once its reader may write here: another user's would stand in the mirror's way.
  signIn?.keep();
  // The server judges --since; asked before the claim, so that a mistyped time leaves the folder unbound.
  if (saved === undefined && options.since !== undefined) {
    await call(() => api.changes({ since: options.since, limit: 1 }, { signal }));
  }
  const databases = await call(() => api.databases({ signal }));
  const owner = { baseUrl: api.apiBase, reader };
  if (full) mirror.startOver(owner);
  else mirror.claim(owner);
  mirror.putDatabases(databases, false);
  const concurrency = options.concurrency ?? 4;
  const limit = options.pageSize ?? 500;
  // Until the server refuses it (an older one): then every game of the run comes from its detail endpoint.
  let expand: 'game' | undefined = 'game';
  const start: ChangesQuery = saved !== undefined ? { cursor: saved } : { since: options.since };
  // One page is read ahead: the server builds the next page while this one is written. A page's cursor is
  // still stored only with the page's own data.
  let ahead = readAhead({ ...start, limit }, true);
  /** The last page's cursor; with watch, where the long-polls go on from. */
  let cursor: string | undefined;
  /** Pages applied since the mirror was last current (its PGN files written). */
  let unsettled = false;
  let pgnFiles: string[] = [];
  try {
    try {
      for (;;) {
        const page = await ahead.page;
        if (page.hasMore) ahead = readAhead({ cursor: page.nextCursor, limit }, false);
        await apply(page);
        cursor = page.nextCursor;
        if (!page.hasMore) break;
      }
    } finally {
      // A read still running when the run fails is stopped and awaited, so that none outlives the run.
      await ahead.stop();
    }
    await current();
    if (options.watch && cursor !== undefined) await watch(cursor);
  } catch (error) {
    if (!stopped()) throw error;
  }
  // Stopped part-way (watch): the PGN files follow the mirror, which is whole up to its last page.
  if (unsettled && options.pgnFiles) pgnFiles = writePgnFiles(mirror, pgnFolder);
  const counts = mirror.counts();
  return {
    mirror: mirror.file,
    resumed: saved !== undefined,
    ...progress,
    mirrorGames: counts.games,
    mirrorDatabases: counts.databases,
    ...waits,
    rateLimitWaitMs: Math.round(waits.rateLimitWaitMs),
    detailRequests,
    pgnFiles,
  };

  /** Applies one page (its data and its cursor in one transaction) and counts it. */
  async function apply(page: ChangesPage<ItemOfPage>): Promise<void> {
    const applied = await applyPage(page.data, page.nextCursor);
    progress.pages++;
    progress.changes += page.data.length;
    progress.gamesUpserted += applied.upserted;
    progress.gamesDeleted += applied.deleted;
    unsettled = true;
    options.onPage?.({ ...progress });
  }

  /** At the end of the feed: the databases read again, the PGN files written, and onCurrent told. */
  async function current(): Promise<void> {
    // Databases deleted meanwhile leave the mirror; their games left it through their tombstones.
    mirror.putDatabases(await call(() => api.databases({ signal })), true);
    if (options.pgnFiles) pgnFiles = writePgnFiles(mirror, pgnFolder);
    unsettled = false;
    const counts = mirror.counts();
    options.onCurrent?.({ ...progress, mirrorGames: counts.games, mirrorDatabases: counts.databases });
  }

  /**
   * Follows the feed from `from` with long-polls until the signal aborts: each page with changes is applied as
   * it comes, and the mirror is current again at the end of each burst.
   */
  async function watch(from: string): Promise<never> {
    const wait = options.waitSeconds ?? DEFAULT_WAIT_SECONDS;
    let at = from;
    for (;;) {
      const page = await readPage({ cursor: at, limit, wait }, false, signal, watcher);
      if (page.data.length > 0) await apply(page);
      at = page.nextCursor;
      if (!page.hasMore && unsettled) await current();
    }
  }

  /** A feed page being read, and how to stop the read: its failure is the run's only once it is awaited. */
  function readAhead(feed: ChangesQuery, first: boolean) {
    const stop = new AbortController();
    const page = readPage(feed, first, signal ? AbortSignal.any([signal, stop.signal]) : stop.signal);
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

  /** One feed page, with its games while the server takes expand. */
  async function readPage(
    feed: ChangesQuery,
    first: boolean,
    each: AbortSignal | undefined,
    client = api,
  ): Promise<ChangesPage<ItemOfPage>> {
    for (;;) {
      try {
        return await call(() => client.changes({ ...feed, expand }, { signal: each }));
      } catch (error) {
        if (expand !== undefined && refused(error, 'expand')) {
          expand = undefined;
          continue;
        }
        if (feed.wait !== undefined && refused(error, 'wait'))
          throw new Error(
            'the server does not hold requests for changes (wait), so --watch cannot follow it: upgrade ' +
              'the server, or run the sync without --watch, as often as needed',
            { cause: error },
          );
        throw (first && saved !== undefined && cursorRejected(error)) || error;
      }
    }
  }

  /**
   * Fetches the details the page's live items lack (none from a server that takes expand), then writes the
   * games, the deletions and the cursor in one transaction.
   */
  async function applyPage(changes: ItemOfPage[], nextCursor: string) {
    const missing = changes.filter((change) => !change.deleted && !change.game);
    detailRequests += missing.length;
    const fetched = await mapConcurrent(missing, concurrency, signal, async (change, each) => {
      try {
        return await call(() => api.game(change.id, { signal: each }));
      } catch (error) {
        // Deleted since the page was read: its tombstone is further on in the feed; delete it now. Only
        // the API's own not_found says so: a proxy's 404 page would drop a live game from the mirror for
        // good (the cursor moves past it), so it fails the run, and the next run repeats the page.
        if (error instanceof ChessportError && error.status === 404 && error.error === 'not_found')
          return null;
        throw error;
      }
    });
    const details = new Map(missing.map((change, i) => [change.id, fetched[i] ?? null]));
    // In page order: the mirror keeps the order in which it first received the games (the PGN files' order).
    const upserts: GameDetail[] = [];
    const deletes: string[] = [];
    for (const change of changes) {
      const game = change.deleted ? null : (change.game ?? details.get(change.id) ?? null);
      if (game) upserts.push(game);
      else deletes.push(change.id);
    }
    // A game moved into a database created after the list was read: read the list again first.
    const known = mirror.databaseIds();
    if (upserts.some((game) => !known.has(game.databaseId))) {
      mirror.putDatabases(await call(() => api.databases({ signal })), false);
    }
    mirror.applyPage({ upserts, deletes, cursor: nextCursor });
    return { upserted: upserts.length, deleted: deletes.length };
  }
}

/** A feed item with its game (expand), or without it (an older server, or a proxy that dropped it). */
type ItemOfPage = Change & { game?: GameDetail | null };

/** The server's 400 to a parameter (expand, wait): an older chessport, whose strict parameters do not know it. */
function refused(error: unknown, parameter: 'expand' | 'wait'): boolean {
  return (
    error instanceof ChessportError &&
    error.status === 400 &&
    error.error === 'invalid_request' &&
    new RegExp(`\\b${parameter}\\b`).test(error.error_description)
  );
}
