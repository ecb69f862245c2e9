// The import's input files, checked before anything is written: a file that cannot be read would otherwise
// fail the command halfway, after the database was created and the files before it were imported.
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError } from './errors.ts';
import { inWorkingFolder } from './io.ts';

/**
 * Throws a CliError naming the first input that is missing, a folder, not readable, not PGN text (a binary file,
 * a zip or xz file: inputFormatProblem), or given twice. A file given twice was imported twice: its games a
 * second time with --allow-duplicates.
 */
export async function checkInputs(files: readonly string[]): Promise<void> {
  const seen: { file: string; dev: number; ino: number }[] = [];
  for (const file of files) {
    const problem = await problemWith(file);
    if (problem) throw new CliError(`${file}: ${problem}`);
    const { dev, ino } = await stat(inWorkingFolder(file));
    const before = seen.find((s) => s.dev === dev && s.ino === ino);
    if (before) {
      const also = before.file === file ? '' : ` (as ${before.file})`;
      throw new CliError(`${file}: given twice${also}: name each file once`);
    }
    seen.push({ file, dev, ino });
  }
}

async function problemWith(file: string): Promise<string | undefined> {
  if (file === '') return 'no file name';
  const path = inWorkingFolder(file);
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) {
    if (info.code === 'ENOENT' || info.code === 'ENOTDIR') return `no such file${missingHint(file)}`;
    if (info.code === 'EACCES') return 'permission denied';
    return info.message;
  }
  if (info.isDirectory()) return 'is a folder: name the PGN files in it';
  // A pipe or a terminal (/dev/stdin, <(zcat games.pgn.gz)) is read like a file.
  if (!info.isFile() && !info.isFIFO() && !info.isCharacterDevice()) return 'not a file';
  try {
    await access(path, constants.R_OK);
  } catch {
    return 'permission denied (not readable)';
  }
  // A pipe's start cannot be looked at without taking it from the import: the import checks it.
  if (!info.isFile()) return undefined;
  const { inputFormatProblem } = await import('../import/input.ts');
  return inputFormatProblem(path).catch((error: NodeJS.ErrnoException) => error.message);
}

/** What a missing name may have meant: a pattern the shell left alone (quoted), or `-` for standard input. */
function missingHint(file: string): string {
  if (file === '-') return ' (standard input is /dev/stdin)';
  if (/[*?[]/.test(basename(file))) return ' (a pattern is expanded by the shell only when it is not quoted)';
  return '';
}

/**
 * Whether two paths name one file: one existing file under two names (links included), or, where either does
 * not exist (yet), the same name in the same folder. A store's WAL exists only while the store is open.
 */
export async function sameFile(given: string, other: string): Promise<boolean> {
  const [a, b] = [inWorkingFolder(given), inWorkingFolder(other)];
  const [x, y] = await Promise.all([stat(a).catch(() => null), stat(b).catch(() => null)]);
  if (x !== null && y !== null) return x.dev === y.dev && x.ino === y.ino;
  return (await canonical(a)) === (await canonical(b));
}

async function canonical(path: string): Promise<string> {
  const full = resolve(path);
  const folder = await realpath(dirname(full)).catch(() => dirname(full));
  return join(folder, basename(full));
}
