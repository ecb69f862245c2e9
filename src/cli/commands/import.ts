import type { Command } from 'commander';
import type { ImportSummary } from '../../import/index.ts';
import type { RejectsFiles } from '../../import/rejects.ts';
import type { Database } from '../../store/index.ts';
import { jsonOption, oneDatabase, requireUser, storeSettingsOf, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { checkInputs, sameFile } from '../inputs.ts';
import { cliIo, inWorkingFolder } from '../io.ts';
import { counted, emit, failureLine, terminalSafe } from '../output.ts';
import { progressReporter } from '../progress.ts';
import { parseMaxGameSizeMb, parseName } from '../settings.ts';
import { dieOf } from '../stop-signals.ts';
import { storeFailure } from '../store-failures.ts';
import { sqliteFiles } from '../store-url.ts';

/** A file's summary in the output; `skipped`: not read, because the database reached maxGames before it. */
type FileSummary = ImportSummary & { skipped: boolean };

function describe(s: ImportSummary, stoppedNote?: string): string {
  const lines = [
    `${s.file}: ${s.imported} imported, ${counted(s.duplicates, 'duplicate')} skipped, ${s.rejected} rejected` +
      ` (${counted(s.games, 'game')} read in ${s.seconds.toFixed(1)}s, ${Math.round(s.games / Math.max(s.seconds, 1e-3))} games/s)`,
  ];
  for (const r of s.rejections.slice(0, 20))
    lines.push(`  rejected: ${r.file}:${r.line} game ${r.game}: ${r.reason}`);
  if (s.rejections.length > 20) lines.push(`  ... and ${s.rejections.length - 20} more (use --json for all)`);
  if (s.rejectsFile) lines.push(`  rejected games written to ${s.rejectsFile}`);
  for (const w of s.warnings.slice(0, 20))
    lines.push(`  warning: ${w.file}:${w.line} game ${w.game}: ${w.warning}`);
  if (s.warnings.length > 20)
    lines.push(`  ... and ${counted(s.warnings.length - 20, 'more warning')} (use --json for all)`);
  if (s.stoppedAtMaxGames)
    lines.push(`  stopped: the database reached its maxGames; ${counted(s.overLimit, 'game')} not added`);
  if (stoppedNote) lines.push(`  ${stoppedNote}`);
  return lines.join('\n');
}

/**
 * The rejects files of the command's inputs, once it is sure they can be written: a --rejects file that is a
 * folder, an input or a file of the store, or that no folder can take, fails the command before it starts.
 */
async function rejectsFiles(
  files: string[],
  named: string | undefined,
  storeUrl: string,
): Promise<RejectsFiles> {
  const { RejectsFiles } = await import('../../import/rejects.ts');
  const rejects = new RejectsFiles(files, cliIo().cwd);
  const problems =
    named !== undefined
      ? [await rejects.problemWith(named)]
      : await Promise.all(files.map((file) => rejects.problemWithDefault(file)));
  const problem = problems.find((p) => p !== undefined);
  if (problem) throw new CliError(problem);
  for (const file of sqliteFiles(storeUrl)) {
    if (named !== undefined && (await sameFile(named, file)))
      throw new CliError(`${named} is a file of the store: name another file for the rejected games`);
  }
  return rejects;
}

/** SIGINT and SIGTERM during an import: the first stops it cleanly (signal), a second at once. */
function interruptions(onForce: () => void) {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const on = (signal: NodeJS.Signals) => {
    if (received) {
      // The batch being written is rolled back by the store (SQLite on its next open, PostgreSQL at once).
      onForce();
      cliIo().stderr.write(`chessport: ${signal} again: stopped at once; run the command again to finish\n`);
      dieOf(signal);
    }
    received = signal;
    controller.abort();
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: controller.signal,
    received: () => received,
    dispose: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

/**
 * An import that stopped part-way, in one line: how far it got, why it stopped, and what to do, which for an
 * interruption, a full or locked store, a lost connection or a rejects file that could not be written is to
 * run the same command again: the games already stored are skipped. An input that is no PGN text, or that
 * could no longer be read, is named. Other causes (the database deleted meanwhile) as they are.
 */
async function stopped(
  error: unknown,
  options: { storeUrl: string; allowDuplicates: boolean; signal: NodeJS.Signals | undefined; left: number },
): Promise<unknown> {
  const { ImportFailure, ImportInterrupted, RejectsWriteError } = await import('../../import/index.ts'); // loaded by now
  const { InputFormatError, InputReadError } = await import('../../import/input.ts');
  if (!(error instanceof ImportFailure)) return error;
  const { cause, summary } = error;
  const stored = summary.imported + summary.duplicates;
  // Later files are named too: "run the command again" is also what imports them.
  const left =
    options.left === 0
      ? ''
      : options.left === 1
        ? '; the file after it was not read'
        : `; the ${options.left} files after it were not read`;
  if (cause instanceof InputFormatError && stored === 0)
    return new CliError(`${summary.file}: ${cause.message}${left}`, { cause });
  const failure =
    cause instanceof ImportInterrupted
      ? { what: `interrupted (${options.signal})`, remedy: 'run the command again to finish it' }
      : cause instanceof InputFormatError || cause instanceof InputReadError
        ? { what: cause.message, remedy: '' }
        : cause instanceof RejectsWriteError
          ? {
              what: cause.message,
              remedy: 'free space there (or name another file with --rejects), then run the command again',
            }
          : storeFailure(cause, options.storeUrl);
  if (!failure) return cause;
  const done =
    stored === 0
      ? 'before any game was stored'
      : `after ${counted(summary.imported, 'game')} ${summary.imported === 1 ? 'was' : 'were'} imported` +
        (summary.duplicates > 0 ? ` (and ${counted(summary.duplicates, 'duplicate')} skipped)` : '');
  const rerun = !failure.remedy
    ? ''
    : options.allowDuplicates
      ? `; with --allow-duplicates, that stores the ${counted(summary.imported, 'game')} imported so far a second time`
      : stored > 0
        ? ': the games already stored are skipped'
        : '';
  const remedy = failure.remedy ? `; ${failure.remedy}` : '';
  const line = `${summary.file}: the import stopped ${done}: ${failure.what}${remedy}${rerun}${left}`;
  return new CliError(line, {
    cause,
    ...(cause instanceof ImportInterrupted && options.signal && { signal: options.signal }),
  });
}

/** The line after the summaries of several files. */
function total(summaries: FileSummary[]): string {
  const sum = (key: 'games' | 'imported' | 'duplicates' | 'rejected' | 'seconds') =>
    summaries.reduce((n, s) => n + s[key], 0);
  const read = summaries.filter((s) => !s.skipped).length;
  return (
    `total: ${sum('imported')} imported, ${counted(sum('duplicates'), 'duplicate')} skipped, ${sum('rejected')} rejected` +
    ` (${counted(sum('games'), 'game')} in ${counted(read, 'file')} read in ${sum('seconds').toFixed(1)}s)`
  );
}

/** --max-game-size, else MAX_GAME_SIZE_MB, in MB; undefined for the import's default. */
function maxGameSizeOf(flag: string | undefined): number | undefined {
  const [text, what] =
    flag !== undefined ? [flag, '--max-game-size'] : [cliIo().env.MAX_GAME_SIZE_MB, 'MAX_GAME_SIZE_MB'];
  if (text === undefined || text === '') return undefined;
  return parseMaxGameSizeMb(text, what) * 1024 * 1024;
}

export function importCommand(program: Command): void {
  program
    .command('import <files...>')
    .description(
      'import PGN files (or gzip- or zstd-compressed ones) into a database (created when missing); identical games are skipped',
    )
    .requiredOption('--user <login>', 'owner of the games')
    .requiredOption('--database <id-slug-or-name>', 'target database')
    .option('--allow-duplicates', 'import games even when identical ones are already in the database')
    .option(
      '--rejects <file>',
      "one file for every input's rejected games, replaced by the first (default: <input>.rejected.pgn each)",
    )
    .option(
      '--max-game-size <MB>',
      'reject a game larger than this, unchecked, into the rejects file (MAX_GAME_SIZE_MB, default 32)',
    )
    .option(...jsonOption)
    .addHelpText(
      'after',
      `
Ctrl-C (SIGINT) or SIGTERM stops the import after the games it has checked are written (exit code 130 or
143); run the same command again to finish: the games already stored are skipped. A second signal stops it
at once. With --json, a command that stops part-way still prints its document, with "stopped".`,
    )
    .action(async (files: string[], opts: ImportCommandOptions, cmd: Command) => {
      let progress: ReturnType<typeof progressReporter> | undefined;
      const interrupt = interruptions(() => progress?.done());
      try {
        await importFiles(files, opts, cmd, interrupt, (p) => {
          progress = p;
        });
      } finally {
        progress?.done();
        interrupt.dispose();
      }
    });
}

interface ImportCommandOptions {
  user: string;
  database: string;
  allowDuplicates?: boolean;
  rejects?: string;
  maxGameSize?: string;
  json?: boolean;
}

async function importFiles(
  given: string[],
  opts: ImportCommandOptions,
  cmd: Command,
  interrupt: ReturnType<typeof interruptions>,
  showing: (progress: ReturnType<typeof progressReporter>) => void,
): Promise<void> {
  const json = Boolean(opts.json);
  const storeUrl = storeSettingsOf(cmd).databaseUrl;
  // Before anything is written: every input must be readable, and where the rejected games would go
  // must take them.
  parseName(opts.database, '--database');
  const maxGameSize = maxGameSizeOf(opts.maxGameSize);
  await checkInputs(given);
  // Read from the working folder, as checkInputs read them (io.ts; the names as given in the process's own).
  const files = given.map(inWorkingFolder);
  const named = opts.rejects === undefined ? undefined : inWorkingFolder(opts.rejects);
  const rejects = await rejectsFiles(files, named, storeUrl);
  // The workers boot while the store opens, and every file's import uses them (warm from the second).
  const { poolForFiles } = await import('../../import/normalize-pool.ts');
  const pool = await poolForFiles(files);
  try {
    await withStore(cmd, async (store) => {
      const user = await requireUser(store, opts.user);
      const { databases } = await store.databases.findOrAdd(user.id, opts.database);
      const database = oneDatabase(databases, opts.database, `user ${user.login}`) as Database;
      const { emptySummary, ImportFailure, ImportInterrupted, importFile } = await import(
        '../../import/index.ts'
      ); // only this command parses PGN
      const summaries: FileSummary[] = [];
      const document = () => ({ database: { id: database.id, slug: database.slug }, files: summaries });
      for (const [index, file] of files.entries()) {
        // Once the database is full, the other files are not read; each is listed as skipped.
        if (summaries.at(-1)?.stoppedAtMaxGames) {
          summaries.push({ ...emptySummary(file), stoppedAtMaxGames: true, skipped: true });
          if (!json)
            cliIo().stdout.write(terminalSafe(`${file}: skipped: the database reached its maxGames\n`));
          continue;
        }
        const progress = progressReporter(cliIo().stderr, {
          quiet: json,
          ...(files.length > 1 && { position: { index, count: files.length } }),
        });
        showing(progress);
        try {
          // A signal between two files stops the command before the next one.
          if (interrupt.signal.aborted) throw new ImportFailure(emptySummary(file), new ImportInterrupted());
          const summary = await importFile({
            store,
            database,
            file,
            // No pool: poolForFiles found the inputs not worth workers (importFile need not ask again).
            ...(pool ? { pool } : { workers: 0 }),
            allowDuplicates: Boolean(opts.allowDuplicates),
            maxGameSize,
            rejects,
            ...(named !== undefined && { rejectsFile: named }),
            onProgress: (p) => progress.update(p),
            signal: interrupt.signal,
          });
          progress.done();
          summaries.push({ ...summary, skipped: false });
          if (!json) cliIo().stdout.write(`${terminalSafe(describe(summary))}\n`);
        } catch (error) {
          progress.done();
          const failure = await stopped(error, {
            storeUrl,
            allowDuplicates: Boolean(opts.allowDuplicates),
            signal: interrupt.received(),
            left: files.length - index - 1,
          });
          // What the stopped file's import did is said as a whole file's is: the games and rejects written.
          const partial = error instanceof ImportFailure ? error.summary : emptySummary(file);
          summaries.push({ ...partial, skipped: false });
          if (json) emit(true, { ...document(), stopped: { file, error: failureLine(failure) } }, () => '');
          else if (partial.games > 0)
            cliIo().stdout.write(
              `${terminalSafe(describe(partial, 'stopped part-way: the rest of this file was not read'))}\n`,
            );
          throw failure;
        }
      }
      if (json) emit(true, document(), () => '');
      else if (files.length > 1) cliIo().stdout.write(`${total(summaries)}\n`);
    });
  } finally {
    await pool?.close();
  }
}
