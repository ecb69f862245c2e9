// What a sync is asked to do and what it reports: the options of syncMirror (engine.ts), its progress as it
// goes, and the summary of a run.
import type { RetryEvent, RetryPolicy } from '@chessport/client';
import type { LoginOptions } from './sign-in.ts';

/** With watch: how long each long-poll may be held, by default (the server takes 1 to 60). */
export const DEFAULT_WAIT_SECONDS = 30;

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
  /**
   * Feed page size, 1 to 500 (default 500); also the games of a take-over's export written per transaction
   * (default 2,000).
   */
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
  /**
   * The URL to start a worker thread of the sync from, given the URL of its module (the take-over's writer
   * thread, takeover-worker.ts): the CLI maps it to the module's bundle when it runs from its own. Default:
   * the module itself.
   */
  workerUrl?: (module: URL) => URL;
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
  /**
   * Games of a first run's take-over, read from the NDJSON export of /games (counted in gamesUpserted too);
   * 0 when the run followed the feed only (a later run, `since`, or a server without the export).
   */
  exportedGames: number;
  pgnFiles: string[];
  elapsedMs: number;
}
