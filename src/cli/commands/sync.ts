// `chessport sync`: the reference consumer of the API. The engine is the workspace package @chessport/sync
// (packages/sync, built on the client alone); this file turns options into a run, prints the summary and maps
// failures to exit codes.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ChessportError, ChessportNetworkError } from '@chessport/client';
import {
  DEFAULT_WAIT_SECONDS,
  type LoginPrompt,
  type SyncCurrent,
  SyncError,
  type SyncFailure,
  type SyncProgress,
  syncMirror,
  TOKENS_FILE,
} from '@chessport/sync';
import type { Command } from 'commander';
import packageJson from '../../../package.json' with { type: 'json' };
import { workerUrl } from '../../workers/bundle.ts';
import { jsonOption } from '../context.ts';
import { CliError } from '../errors.ts';
import { type CliOutput, cliIo, inWorkingFolder } from '../io.ts';
import { counted, emit, terminalSafe } from '../output.ts';
import { nonEmpty, parsePositiveInt } from '../settings.ts';

/** Exit codes a script can act on; everything else that fails exits with 1. */
export const SYNC_EXIT: Record<SyncFailure | 'interrupted', number> = {
  busy: 1,
  unauthorized: 3,
  forbidden: 4,
  cursor_rejected: 5,
  other_reader: 6,
  other_server: 6,
  login_denied: 7,
  login_expired: 8,
  interrupted: 130,
};

const EXIT_HELP = `
Exit codes:
  0    the mirror is current
  1    any other failure: server unreachable after retries, server error, bad option, the folder in
       use by another sync
  3    401 invalid_token: the token is unknown, expired or revoked; get a new one. Or the saved sign-in's
       refresh token is refused (expired, revoked, or used before): sign in again with --login
  4    403 insufficient_scope: the token needs user.read, games.read and databases.read
  5    the server rejects the saved cursor of the mirror's own reader: run again with --full to start over
  6    the folder is the mirror of another reader (the token is another user's or app's, or the server's
       secret changed) or of another server; nothing was written. --full starts over only for the same
       reader; --full --switch-reader replaces the mirror with the token's data
  7    --login: the user denied the sync access
  8    --login: the code expired (10 minutes) before the user allowed the sync access
  130  interrupted (SIGINT or SIGTERM); the next run continues where this one stopped. With --watch,
       SIGINT or SIGTERM is how the run ends: exit 0, the mirror whole up to its last page

A 429 is never a failure: the sync waits as Retry-After says and carries on. The cursor is stored in the
same transaction as the data of its page, so a run killed at any point is finished by running it again.
The token may also come from CHESSPORT_TOKEN, which keeps it out of the process list. Without either,
--login signs in through the device flow: it prints an address and a code to enter there in a browser,
and keeps the tokens in <out>/${TOKENS_FILE} (readable by you only), which later runs use and refresh.`;

interface SyncCliOptions {
  baseUrl: string;
  token?: string;
  login?: boolean;
  clientId?: string;
  out: string;
  limit?: string;
  concurrency?: string;
  pgnFiles?: boolean;
  full?: boolean;
  switchReader?: boolean;
  since?: string;
  compression: string;
  watch?: boolean;
  wait?: string;
  json?: boolean;
}

function progressLine(stream: CliOutput) {
  let shown = false;
  return {
    update(p: SyncProgress, note = ''): void {
      if (!stream.isTTY) return;
      const line = `${counted(p.pages, 'page')}, ${counted(p.changes, 'change')}: ${counted(p.gamesUpserted, 'game')} upserted, ${p.gamesDeleted} deleted${note}`;
      stream.write(`\r\x1b[2K${line}`);
      shown = true;
    },
    done(): void {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
}

export function syncCommand(program: Command): void {
  program
    .command('sync')
    .description('mirror a user’s games from a chessport server into a local SQLite file, through the feed')
    .requiredOption('--base-url <url>', 'address of the server, like https://chess.example.org')
    .option(
      '--token <token>',
      'access token with user.read, games.read and databases.read (or CHESSPORT_TOKEN)',
    )
    .option('--login', `sign in through the device flow; the tokens are kept in <out>/${TOKENS_FILE}`)
    .option('--client-id <id>', 'with --login: the client id of the server’s app for chessport sync')
    .requiredOption('--out <dir>', 'folder of the mirror: mirror.sqlite, and pgn/ with --pgn-files')
    .option(
      '--limit <n>',
      'changes per feed page (each with its game), 1 to 500 (default 500); also the games a take-over writes per transaction (default 2000)',
    )
    .option('--concurrency <n>', 'game details fetched at the same time, from a server without expand', '4')
    .option('--pgn-files', 'also write one PGN file per database into <out>/pgn (each replaced atomically)')
    .option('--full', 'start over: empty the mirror and read the whole feed again (same reader only)')
    .option('--switch-reader', 'with --full: let a mirror made for another reader become this token’s')
    .option('--since <time>', 'first run only: start at changes from this time (ISO 8601 with a zone)')
    .option(
      '--watch',
      'once current, keep the mirror current until SIGINT or SIGTERM, woken by the server as changes commit',
    )
    .option(
      '--wait <seconds>',
      `with --watch: how long the server holds each request for changes, 1 to 60 (default ${DEFAULT_WAIT_SECONDS})`,
    )
    .option(
      '--compression <when>',
      'ask for compressed answers: auto (unless the server is on this machine), on, off',
      'auto',
    )
    .option(...jsonOption)
    .addHelpText('after', EXIT_HELP)
    .action(async (opts: SyncCliOptions) => {
      if (opts.login && opts.token !== undefined)
        throw new CliError('--login gets a token through the device flow: give --token or --login, not both');
      if (opts.clientId !== undefined && !opts.login) throw new CliError('--client-id goes with --login');
      if (opts.clientId !== undefined) nonEmpty(opts.clientId, '--client-id');
      // --login is asked for explicitly, so it wins over CHESSPORT_TOKEN; a token wins over a saved sign-in.
      const token = opts.login ? undefined : (opts.token ?? cliIo().env.CHESSPORT_TOKEN);
      // The mirror's folder, read from the working folder (io.ts); said as given.
      const out = inWorkingFolder(opts.out);
      if (!token && !opts.login && !existsSync(join(out, TOKENS_FILE)))
        throw new CliError(
          'give a token with --token or CHESSPORT_TOKEN, or sign in with --login --client-id <id>',
        );
      // Without --limit the sync's defaults: feed pages of 500, and larger transactions for a take-over.
      const pageSize = opts.limit === undefined ? undefined : parsePositiveInt(opts.limit, '--limit');
      if (pageSize !== undefined && pageSize > 500) throw new CliError('--limit must be from 1 to 500');
      const concurrency = parsePositiveInt(opts.concurrency ?? '4', '--concurrency');
      // Checked before the mirror's folder is made: an empty --out made the mirror in the working folder,
      // and a base URL that is not one made an empty mirror, then failed with "Invalid URL".
      nonEmpty(opts.out, '--out');
      // mkdir said only "EEXIST: file already exists, mkdir '…'".
      if (statSync(out, { throwIfNoEntry: false })?.isDirectory() === false)
        throw new CliError(`--out ${opts.out} is not a folder: name the folder of the mirror`);
      checkBaseUrl(opts.baseUrl);
      if (!['auto', 'on', 'off'].includes(opts.compression))
        throw new CliError('--compression must be auto, on or off');
      const compression = opts.compression === 'auto' ? undefined : opts.compression === 'on';
      if (opts.wait !== undefined && !opts.watch) throw new CliError('--wait goes with --watch');
      const waitSeconds = parsePositiveInt(opts.wait ?? String(DEFAULT_WAIT_SECONDS), '--wait');
      if (waitSeconds > 60) throw new CliError('--wait must be from 1 to 60 (seconds)');
      const watch = Boolean(opts.watch);

      const controller = new AbortController();
      let signalName: NodeJS.Signals | undefined;
      const interrupt = (signal: NodeJS.Signals) => {
        signalName = signal;
        controller.abort(new Error('interrupted'));
      };
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      const progress = progressLine(cliIo().stderr);
      let last: SyncProgress = { pages: 0, changes: 0, gamesUpserted: 0, gamesDeleted: 0 };
      let previous: SyncProgress | undefined;
      try {
        const summary = await syncMirror({
          baseUrl: opts.baseUrl,
          ...(token && { token }),
          ...(opts.login && {
            login: { ...(opts.clientId !== undefined && { clientId: opts.clientId }), onPrompt: showPrompt },
          }),
          out,
          ...(pageSize !== undefined && { pageSize }),
          concurrency,
          pgnFiles: Boolean(opts.pgnFiles),
          full: Boolean(opts.full),
          switchReader: Boolean(opts.switchReader),
          ...(opts.since !== undefined && { since: opts.since }),
          userAgent: `chessport-sync/${packageJson.version}`,
          ...(compression !== undefined && { compression }),
          signal: controller.signal,
          // The take-over's writer thread starts from its bundle when the command runs from its own.
          workerUrl: (module) => workerUrl(module),
          watch,
          waitSeconds,
          onPage: (p) => {
            last = p;
            progress.update(p);
          },
          // With --watch, a line each time the mirror is current again (not with --json, whose one
          // document comes at the end).
          onCurrent: (current) => {
            if (!watch) return;
            progress.done();
            if (!opts.json) cliIo().stdout.write(`${terminalSafe(currentLine(current, previous))}\n`);
            previous = current;
          },
          onRetry: (event) => {
            if (event.reason === 'rate_limited')
              progress.update(last, ` (rate limited: waiting ${Math.ceil(event.waitMs / 1000)} s)`);
          },
        });
        progress.done();
        if (opts.login)
          cliIo().stderr.write(
            `chessport sync: signed in; the tokens are kept in ${join(opts.out, TOKENS_FILE)} (readable by ` +
              'you only), and later runs use them without --token or --login\n',
          );
        emit(Boolean(opts.json), summary, () => {
          const seconds = (summary.elapsedMs / 1000).toFixed(1);
          const lines = [
            `synced ${counted(summary.pages, 'page')}, ${counted(summary.changes, 'change')}: ${counted(summary.gamesUpserted, 'game')} upserted, ` +
              `${summary.gamesDeleted} deleted in ${seconds}s (${summary.resumed ? 'continued' : 'first run'})`,
            `mirror: ${counted(summary.mirrorGames, 'game')} in ${counted(summary.mirrorDatabases, 'database')}, ${summary.mirror}`,
          ];
          if (summary.exportedGames > 0)
            lines.push(
              `took ${counted(summary.exportedGames, 'game')} over from one export, then followed the feed from its cursor`,
            );
          if (summary.rateLimitWaits > 0) {
            const waited = (summary.rateLimitWaitMs / 1000).toFixed(1);
            lines.push(
              `waited ${waited}s on the rate limit (${counted(summary.rateLimitWaits, 'request')} refused with 429)`,
            );
          }
          if (summary.retries > 0) lines.push(`retried ${counted(summary.retries, 'request')} after errors`);
          if (summary.detailRequests > 0)
            lines.push(
              `read ${counted(summary.detailRequests, 'game')} one by one: the feed sent their changes without them (an older server?)`,
            );
          if (summary.pgnFiles.length > 0)
            lines.push(`wrote ${counted(summary.pgnFiles.length, 'PGN file')}`);
          if (watch && signalName) lines.push(`stopped watching on ${signalName}`);
          return lines.join('\n');
        });
      } catch (error) {
        progress.done();
        cliIo().setExitCode(fail(error, controller.signal, watch));
      } finally {
        process.off('SIGINT', interrupt);
        process.off('SIGTERM', interrupt);
      }
    });
}

/** Where to sign in, on stderr (stdout keeps the summary alone); the server's words made terminal-safe. */
function showPrompt(prompt: LoginPrompt): void {
  const minutes = Math.max(1, Math.round((prompt.expiresAt - Date.now()) / 60_000));
  const lines = [
    `To sign in, open ${prompt.verificationUri} in a browser and enter the code ${prompt.userCode}`,
    ...(prompt.verificationUriComplete ? [`(or open ${prompt.verificationUriComplete})`] : []),
    `Waiting for you to allow the sync; the code is good for ${counted(minutes, 'minute')}.`,
  ];
  cliIo().stderr.write(`${lines.map((line) => terminalSafe(line)).join('\n')}\n`);
}

/** An http(s) URL; the text is not quoted back, as it may hold a password. */
function checkBaseUrl(text: string): void {
  const protocol = URL.parse(text)?.protocol;
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new CliError(
      '--base-url must be the http:// or https:// address of the server, like https://chess.example.org',
    );
}

/** One line of --watch: what changed since the mirror was last current, and what it holds now. */
function currentLine(current: SyncCurrent, previous: SyncProgress | undefined): string {
  const changes = current.changes - (previous?.changes ?? 0);
  const upserted = current.gamesUpserted - (previous?.gamesUpserted ?? 0);
  const deleted = current.gamesDeleted - (previous?.gamesDeleted ?? 0);
  const time = new Date().toISOString().slice(11, 19);
  return (
    `${time} current: ${counted(changes, 'change')} (${upserted} upserted, ${deleted} deleted); ` +
    `mirror: ${counted(current.mirrorGames, 'game')} in ${counted(current.mirrorDatabases, 'database')}`
  );
}

/** Prints why the run stopped and returns the exit code. */
function fail(error: unknown, signal: AbortSignal, watch: boolean): number {
  // The server's own words (error descriptions) are among what is printed: a hostile one could send ESC.
  const say = (message: string) => cliIo().stderr.write(`chessport sync: ${terminalSafe(message)}\n`);
  // --watch ends with a signal: one that comes before the mirror was claimed stops it with nothing written.
  if (signal.aborted && watch) {
    say('stopped before the first page; the mirror is as it was');
    return 0;
  }
  if (signal.aborted) {
    say('interrupted; the mirror keeps every page written so far, run again to continue');
    return SYNC_EXIT.interrupted;
  }
  if (error instanceof SyncError) {
    say(error.message);
    return SYNC_EXIT[error.reason];
  }
  if (error instanceof ChessportError) {
    say(`the server answered ${error.message}`);
    return 1;
  }
  if (error instanceof ChessportNetworkError) {
    say(`${error.message}. The mirror keeps every page written so far; run again to continue`);
    return 1;
  }
  if (error instanceof Error) {
    say(error.message);
    return 1;
  }
  throw error;
}
