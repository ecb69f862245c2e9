// Import speed: chessport's full import (read, split, check every move, write to SQLite) against
// `pgn-extract -Wuci` (parse, check, write UCI to /dev/null) on the same files in the same run, as games/s
// and their ratio. Both are timed as whole commands, wall clock, start-up included, one after the other.
//
// Timings on a shared machine are noisy, and pgn-extract runs on one core while chessport spreads over all
// of them, so other load on the machine changes the ratio: the table shows the load average next to each
// row. Read ratios from one run; each file is measured BENCH_IMPORT_RUNS times (default 3), alternating.
// Besides the median ratio, "ratio of best runs" sets each command's fastest run against the other's: on a
// machine that other jobs share, the run least slowed by them.
// The CPU time of each command (all its threads) is shown too, and the CPU ratio: pgn-extract's CPU seconds
// over chessport's. It moves far less with load than wall time, and says how much of the wall-clock ratio
// comes from a second core rather than from doing less work. "Ratio to unhindered pgn-extract" takes
// pgn-extract's CPU time as its wall time (the least it can be on one thread): the ratio that other load on
// the machine cannot flatter.
// Last, one file is imported several times into one database, to show whether imports slow down as the
// database grows (BENCH_IMPORT_GROWTH imports, default 5; 0 skips it).
// Usage: node bench/import.ts; BENCH_IMPORT_FILES=a.pgn,b.pgn (names in the PGN corpus's large/, or paths).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CORPUS } from '../test/helpers/corpus.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/chessport.js');
const PGN = join(CORPUS, 'large');
const FILES = (
  process.env.BENCH_IMPORT_FILES ??
  [
    'notnil_chess__twic0920.pgn',
    'stockfish-books__8moves_v3.pgn',
    'stockfish-books__bjbraams_chessdb_198350_lines.pgn',
    'tcec_season20_all.pgn',
    'pgnmentor_players_A-J.pgn',
  ].join(',')
)
  .split(',')
  .map((f) => resolve(PGN, f));
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 3);
const PGN_EXTRACT = ['/usr/games/pgn-extract', '/usr/bin/pgn-extract'].find(existsSync);

interface Timed {
  games: number;
  seconds: number;
  /** CPU seconds (user + system) of the command and its threads, or NaN where the system does not say. */
  cpu: number;
}

/**
 * CPU seconds used so far by this process's finished children (Linux: cutime + cstime of /proc/self/stat,
 * in clock ticks of 1/100 s). Wall times on a shared 2-core machine swing with other load; CPU time shows
 * how much work each tool does, and for pgn-extract, on one core, it bounds what a second core can gain.
 */
function childCpu(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** `chessport import` of the file into the store at dir (its user `bench` made already), timed. */
function importInto(dir: string, file: string, extra: string[] = []): Timed {
  const env = { ...process.env, DATABASE_URL: join(dir, 'bench.sqlite') };
  const args = ['import', file, '--user', 'bench', '--database', 'bench', '--json', ...extra];
  const cpu = childCpu();
  const started = performance.now();
  const out = execFileSync(process.execPath, [BIN, ...args, '--rejects', join(dir, 'r.pgn')], {
    env,
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const seconds = (performance.now() - started) / 1000;
  const summary = JSON.parse(out.toString()) as { files: { games: number }[] };
  return { games: summary.files[0]?.games ?? 0, seconds, cpu: childCpu() - cpu };
}

/** A fresh store with the user `bench`, in a temporary folder removed after fn. */
function withFreshStore<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-'));
  try {
    execFileSync(process.execPath, [BIN, 'users', 'add', 'bench'], {
      env: { ...process.env, DATABASE_URL: join(dir, 'bench.sqlite') },
    });
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function chessport(file: string): Timed {
  return withFreshStore((dir) => importInto(dir, file));
}

const GROWTH_FILE = 'stockfish-books__bjbraams_chessdb_198350_lines.pgn';
const GROWTH_IMPORTS = Number(process.env.BENCH_IMPORT_GROWTH ?? 5);

/**
 * The same file imported again and again into one database (--allow-duplicates: every game is added): does
 * an import slow down as its database grows? On SQLite the game_keys log (src/store/sqlite/game-keys.ts) is
 * what keeps it flat (docs/performance.md, growth of the database).
 */
export function benchGrowth(): string[][] {
  const rows = [['import', 'games in the database before', 'seconds', 'games/s', 'time / first import']];
  const file = resolve(PGN, GROWTH_FILE);
  if (GROWTH_IMPORTS <= 0) return rows;
  if (!existsSync(file)) return [...rows, [`skipped: ${GROWTH_FILE} not found (is the PGN corpus absent?)`]];
  withFreshStore((dir) => {
    let before = 0;
    let first = 0;
    for (let i = 1; i <= GROWTH_IMPORTS; i++) {
      const t = importInto(dir, file, ['--allow-duplicates']);
      first ||= t.seconds;
      rows.push([
        String(i),
        String(before),
        t.seconds.toFixed(2),
        rate(t).toFixed(0),
        (t.seconds / first).toFixed(2),
      ]);
      before += t.games;
    }
  });
  return rows;
}

function pgnExtract(path: string, file: string): Timed {
  const cpu = childCpu();
  const started = performance.now();
  const run = spawnSync(path, ['-Wuci', '-o', '/dev/null', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const seconds = (performance.now() - started) / 1000;
  const m = /(\d+) games? matched out of (\d+)/.exec(run.stderr ?? '');
  return { games: Number(m?.[2] ?? 0), seconds, cpu: childCpu() - cpu };
}

const rate = (t: Timed) => t.games / t.seconds;
const load = () => loadavg()[0]?.toFixed(1) ?? '?';
const best = (ts: Timed[]) => Math.min(...ts.map((t) => t.seconds));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export function benchImport(): { runs: string[][]; summary: string[][] } {
  const runs = [
    [
      'file',
      'MB',
      'games',
      'chessport s',
      'cpu s',
      'games/s',
      'pgn-extract s',
      'cpu s',
      'games/s',
      'ratio',
      'load',
    ],
  ];
  const summary = [
    [
      'file',
      'games',
      'chessport games/s',
      'pgn-extract games/s',
      'ratio (median)',
      'ratios',
      'ratio of best runs',
      'ratio to unhindered pgn-extract (median)',
      'cpu ratio (median)',
    ],
  ];
  // Any earlier run leaves Node's compile cache filled (bin/chessport.js); this one makes sure of it.
  const small = resolve(PGN, 'pgn-extract__fischer.pgn');
  if (existsSync(small)) chessport(small);
  for (const file of FILES) {
    const name = file.split('/').at(-1) ?? file;
    if (!existsSync(file)) {
      summary.push([name, 'skipped: not found (is the PGN corpus absent?)', '', '', '', '', '', '', '']);
      continue;
    }
    readFileSync(file); // into the page cache, so that neither side pays for the first read from disk
    const ours: Timed[] = [];
    const theirs: Timed[] = [];
    for (let i = 0; i < RUNS; i++) {
      const mine = chessport(file);
      const ref = PGN_EXTRACT ? pgnExtract(PGN_EXTRACT, file) : undefined;
      ours.push(mine);
      if (ref) theirs.push(ref);
      runs.push([
        name,
        (statSync(file).size / 1e6).toFixed(1),
        String(mine.games),
        mine.seconds.toFixed(2),
        mine.cpu.toFixed(2),
        rate(mine).toFixed(0),
        ref ? ref.seconds.toFixed(2) : '-',
        ref ? ref.cpu.toFixed(2) : '-',
        ref ? rate(ref).toFixed(0) : 'pgn-extract not installed',
        ref ? (rate(mine) / rate(ref)).toFixed(2) : '-',
        load(),
      ]);
    }
    const ratios = ours.map((m, i) => (theirs[i] ? rate(m) / rate(theirs[i]) : Number.NaN));
    summary.push([
      name,
      String(ours[0]?.games ?? 0),
      median(ours.map(rate)).toFixed(0),
      theirs.length ? median(theirs.map(rate)).toFixed(0) : '-',
      theirs.length ? median(ratios).toFixed(2) : '-',
      ratios.map((r) => r.toFixed(2)).join(' '),
      // Each command's fastest run: the one least slowed by other load on the machine (the two may come from
      // different rounds).
      theirs.length ? (best(theirs) / best(ours)).toFixed(2) : '-',
      // As if pgn-extract had run without a pause: on one thread its wall time is at least its CPU time, and
      // on a shared machine it can be far more at the same CPU time (runnable, not running). The conservative
      // ratio: chessport's wall time against pgn-extract's CPU time.
      theirs.length ? median(ours.map((m, i) => (theirs[i]?.cpu ?? Number.NaN) / m.seconds)).toFixed(2) : '-',
      // pgn-extract's CPU time over chessport's for the same games: above 1, chessport does less work.
      theirs.length ? median(ours.map((m, i) => (theirs[i]?.cpu ?? Number.NaN) / m.cpu)).toFixed(2) : '-',
    ]);
  }
  return { runs, summary };
}

/**
 * How high the import's ratio could go at most: the chess checking alone (bench/check-alone.ts, one cold pass in
 * a process of its own, CPU time of all its threads), spread evenly over every core with nothing else to do,
 * against pgn-extract's whole run in the same round. The import does more (start-up, reading, hashing, storing,
 * passing games between threads), so its ratio stays below this ceiling.
 */
export function benchCeiling(): string[][] {
  const cores = availableParallelism();
  const rows = [
    [
      'file',
      'checking alone: cpu s (median)',
      'pgn-extract: cpu s',
      'pgn-extract: s',
      'checking cpu / pgn-extract cpu',
      `ratio ceiling on ${cores} cores`,
    ],
  ];
  for (const file of FILES) {
    const name = file.split('/').at(-1) ?? file;
    if (!existsSync(file) || !PGN_EXTRACT) {
      rows.push([
        name,
        `skipped: ${PGN_EXTRACT ? 'not found' : 'pgn-extract not installed'}`,
        '',
        '',
        '',
        '',
      ]);
      continue;
    }
    const checks: number[] = [];
    const refs: Timed[] = [];
    for (let i = 0; i < RUNS; i++) {
      const out = execFileSync(process.execPath, [join(import.meta.dirname, 'check-alone.ts'), file]);
      checks.push((JSON.parse(out.toString()) as { cpu: number }).cpu);
      refs.push(pgnExtract(PGN_EXTRACT, file));
    }
    const check = median(checks);
    const ref = median(refs.map((t) => t.seconds));
    rows.push([
      name,
      check.toFixed(2),
      median(refs.map((t) => t.cpu)).toFixed(2),
      ref.toFixed(2),
      (check / median(refs.map((t) => t.cpu))).toFixed(2),
      (ref / (check / cores)).toFixed(2),
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

if (import.meta.main) {
  const [one, five, fifteen] = loadavg().map((l) => l.toFixed(1));
  const before = `load average before: ${one} ${five} ${fifteen}`;
  const { runs, summary } = benchImport();
  printTable(`import: chessport vs pgn-extract -Wuci, each run (${before})`, runs);
  printTable(
    `import: medians over ${RUNS} runs (load average after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
    summary,
  );
  printTable(
    `import: the ceiling of the ratio, from the chess checking alone (medians over ${RUNS} runs)`,
    benchCeiling(),
  );
  printTable(
    `import into a growing database: ${GROWTH_FILE} ${GROWTH_IMPORTS} times into one`,
    benchGrowth(),
  );
}
