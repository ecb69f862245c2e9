import type { Command } from 'commander';
import type { ImportSummary } from '../../import/index.ts';
import type { RejectsFiles } from '../../import/rejects.ts';
import type { Database } from '../../store/index.ts';
import { jsonOption, oneDatabase, requireUser, settingsOf, withStore } from '../context.ts';
import { checkInputs, sameFile } from '../inputs.ts';
import { emit, terminalSafe } from '../output.ts';
import { progressReporter } from '../progress.ts';
import { CliError, parseName } from '../settings.ts';
import { storeFailure } from '../store-failures.ts';
import { sqliteFiles } from '../store-url.ts';

/** A file's summary in the output; `skipped`: not read, because the database reached maxGames before it. */
type FileSummary = ImportSummary & { skipped: boolean };

function describe(s: ImportSummary): string {
  const lines = [
    `${s.file}: ${s.imported} imported, ${s.duplicates} duplicates skipped, ${s.rejected} rejected` +
      ` (${s.games} games read in ${s.seconds.toFixed(1)}s, ${Math.round(s.games / Math.max(s.seconds, 1e-3))} games/s)`,
  ];
  for (const r of s.rejections.slice(0, 20))
    lines.push(`  rejected: ${r.file}:${r.line} game ${r.game}: ${r.reason}`);
  if (s.rejections.length > 20) lines.push(`  ... and ${s.rejections.length - 20} more (use --json for all)`);
  if (s.rejectsFile) lines.push(`  rejected games written to ${s.rejectsFile}`);
  for (const w of s.warnings.slice(0, 20))
    lines.push(`  warning: ${w.file}:${w.line} game ${w.game}: ${w.warning}`);
  if (s.warnings.length > 20)
    lines.push(`  ... and ${s.warnings.length - 20} more warnings (use --json for all)`);
  if (s.stoppedAtMaxGames)
    lines.push(`  stopped: the database reached its maxGames; ${s.overLimit} games not added`);
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
  const rejects = new RejectsFiles(files);
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

/**
 * An import that stopped part-way, in one line: how far it got, why it stopped, and what to do, which for a
 * full or locked store, a lost connection or a rejects file that could not be written is to run the same
 * command again: the games already stored are skipped. An input that is no PGN text, or that could no longer
 * be read, is named. Other causes (the database deleted meanwhile) as they are.
 */
async function stopped(error: unknown, storeUrl: string, allowDuplicates: boolean): Promise<unknown> {
  const { ImportFailure, RejectsWriteError } = await import('../../import/index.ts'); // loaded by now
  const { InputFormatError, InputReadError } = await import('../../import/input.ts');
  if (!(error instanceof ImportFailure)) return error;
  const { cause, summary } = error;
  const stored = summary.imported + summary.duplicates;
  if (cause instanceof InputFormatError && stored === 0)
    return new CliError(`${summary.file}: ${cause.message}`, { cause });
  const failure =
    cause instanceof InputFormatError || cause instanceof InputReadError
      ? { what: cause.message, remedy: '' }
      : cause instanceof RejectsWriteError
        ? {
            what: cause.message,
            remedy: 'free space there (or name another file with --rejects), then run the command again',
          }
        : storeFailure(cause, storeUrl);
  if (!failure) return cause;
  const done =
    stored === 0
      ? 'before any game was stored'
      : `after ${summary.imported} games were imported` +
        (summary.duplicates > 0 ? ` (and ${summary.duplicates} duplicates skipped)` : '');
  const rerun = !failure.remedy
    ? ''
    : allowDuplicates
      ? `; with --allow-duplicates, that stores the ${summary.imported} games imported so far a second time`
      : stored > 0
        ? ': the games already stored are skipped'
        : '';
  const remedy = failure.remedy ? `; ${failure.remedy}` : '';
  const line = `${summary.file}: the import stopped ${done}: ${failure.what}${remedy}${rerun}`;
  return new CliError(line, { cause });
}

/** The line after the summaries of several files. */
function total(summaries: FileSummary[]): string {
  const sum = (key: 'games' | 'imported' | 'duplicates' | 'rejected' | 'seconds') =>
    summaries.reduce((n, s) => n + s[key], 0);
  const read = summaries.filter((s) => !s.skipped).length;
  return (
    `total: ${sum('imported')} imported, ${sum('duplicates')} duplicates skipped, ${sum('rejected')} rejected` +
    ` (${sum('games')} games in ${read} files read in ${sum('seconds').toFixed(1)}s)`
  );
}

export function importCommand(program: Command): void {
  program
    .command('import <files...>')
    .description(
      'import PGN files (or gzip-compressed ones) into a database (created when missing); identical games are skipped',
    )
    .requiredOption('--user <login>', 'owner of the games')
    .requiredOption('--database <id-slug-or-name>', 'target database')
    .option('--allow-duplicates', 'import games even when identical ones are already in the database')
    .option(
      '--rejects <file>',
      "one file for every input's rejected games, replaced by the first (default: <input>.rejected.pgn each)",
    )
    .option(...jsonOption)
    .action(
      async (
        files: string[],
        opts: { user: string; database: string; allowDuplicates?: boolean; rejects?: string; json?: boolean },
        cmd: Command,
      ) => {
        // Before anything is written: every input must be readable, and where the rejected games would go
        // must take them.
        parseName(opts.database, '--database');
        await checkInputs(files);
        const rejects = await rejectsFiles(files, opts.rejects, settingsOf(cmd).databaseUrl);
        // The workers boot while the store opens, and every file's import uses them (warm from the second).
        const { poolForFiles } = await import('../../import/normalize-pool.ts');
        const pool = await poolForFiles(files);
        try {
          await withStore(cmd, async (store) => {
            const user = await requireUser(store, opts.user);
            const { databases } = await store.findOrAddDatabase(user.id, opts.database);
            const database = oneDatabase(databases, opts.database, `user ${user.login}`) as Database;
            const summaries: FileSummary[] = [];
            for (const [index, file] of files.entries()) {
              // Once the database is full, the other files are not read; each is listed as skipped.
              const { emptySummary, importFile } = await import('../../import/index.ts'); // only this command parses PGN
              if (summaries.at(-1)?.stoppedAtMaxGames) {
                summaries.push({ ...emptySummary(file), stoppedAtMaxGames: true, skipped: true });
                if (!opts.json)
                  process.stdout.write(terminalSafe(`${file}: skipped: the database reached its maxGames\n`));
                continue;
              }
              const progress = progressReporter(process.stderr, {
                quiet: Boolean(opts.json),
                ...(files.length > 1 && { position: { index, count: files.length } }),
              });
              const summary = await importFile({
                store,
                database,
                file,
                // No pool: poolForFiles found the inputs not worth workers (importFile need not ask again).
                ...(pool ? { pool } : { workers: 0 }),
                allowDuplicates: Boolean(opts.allowDuplicates),
                rejects,
                ...(opts.rejects !== undefined && { rejectsFile: opts.rejects }),
                onProgress: (p) => progress.update(p),
              }).catch(async (error: unknown) => {
                progress.done();
                throw await stopped(error, settingsOf(cmd).databaseUrl, Boolean(opts.allowDuplicates));
              });
              progress.done();
              summaries.push({ ...summary, skipped: false });
              if (!opts.json) process.stdout.write(`${terminalSafe(describe(summary))}\n`);
            }
            if (opts.json)
              emit(true, { database: { id: database.id, slug: database.slug }, files: summaries }, () => '');
            else if (files.length > 1) process.stdout.write(`${total(summaries)}\n`);
          });
        } finally {
          await pool?.close();
        }
      },
    );
}
