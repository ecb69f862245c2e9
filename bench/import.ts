// Import speed: chessport's full import (read, split, check every move, write to SQLite) against
// `pgn-extract -Wuci` (parse, check, write UCI) on the same files in the same run, as games/s and ratio.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const PGN = resolve(ROOT, '../shared/pgn/large');
const FILES = (
  process.env.BENCH_IMPORT_FILES ??
  'notnil_chess__twic0920.pgn,stockfish-books__8moves_v3.pgn,tcec_season20_all.pgn,pgnmentor_players_A-J.pgn'
)
  .split(',')
  .map((f) => join(PGN, f));
const PGN_EXTRACT = ['/usr/games/pgn-extract', '/usr/bin/pgn-extract'].find(existsSync);

function chessport(file: string): { games: number; seconds: number } {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-'));
  const env = { ...process.env, DATABASE_URL: join(dir, 'bench.sqlite') };
  try {
    execFileSync(process.execPath, [join(ROOT, 'bin/chessport.js'), 'users', 'add', 'bench'], { env });
    const started = performance.now();
    const out = execFileSync(
      process.execPath,
      [
        join(ROOT, 'bin/chessport.js'),
        'import',
        file,
        '--user',
        'bench',
        '--database',
        'bench',
        '--json',
        '--rejects',
        join(dir, 'r.pgn'),
      ],
      { env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const seconds = (performance.now() - started) / 1000;
    const summary = JSON.parse(out.toString()) as { files: { games: number }[] };
    return { games: summary.files[0]?.games ?? 0, seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function pgnExtract(file: string): { games: number; seconds: number } | null {
  if (!PGN_EXTRACT) return null;
  const started = performance.now();
  const run = spawnSync(PGN_EXTRACT, ['-Wuci', '-o', '/dev/null', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const seconds = (performance.now() - started) / 1000;
  const m = /(\d+) games? matched out of (\d+)/.exec(run.stderr ?? '');
  return { games: Number(m?.[2] ?? 0), seconds };
}

export function benchImport(): string[][] {
  const rows = [['file', 'MB', 'games', 'chessport games/s', 'pgn-extract games/s', 'ratio']];
  for (const file of FILES) {
    if (!existsSync(file)) {
      rows.push([file, 'skipped: not found (../shared/pgn absent?)', '', '', '', '']);
      continue;
    }
    const mine = chessport(file);
    const theirs = pgnExtract(file);
    const ours = mine.games / mine.seconds;
    const ref = theirs ? theirs.games / theirs.seconds : Number.NaN;
    rows.push([
      file.split('/').at(-1) ?? file,
      (statSync(file).size / 1e6).toFixed(1),
      String(mine.games),
      ours.toFixed(0),
      theirs ? ref.toFixed(0) : 'pgn-extract not installed',
      theirs ? (ours / ref).toFixed(2) : '-',
    ]);
  }
  return rows;
}

export function printTable(title: string, rows: string[][]): void {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  console.log(`\n${title}`);
  for (const [n, row] of rows.entries()) {
    console.log(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  '));
    if (n === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

if (import.meta.main)
  printTable('import: chessport vs pgn-extract -Wuci (same files, same run)', benchImport());
