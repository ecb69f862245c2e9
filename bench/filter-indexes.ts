// What the filters' indexes (migrations 0015 and 0016: nine indexes of the games table, led by the owner) cost an
// import: `chessport import` of one file into a fresh store with them, and into a fresh store where they are
// dropped after the migrations ran, same run, alternating, on SQLite and PostgreSQL. Wall clock of the whole
// command, start-up included; the ratio of the medians says how much slower the import is with them.
// Usage: node bench/filter-indexes.ts [--stores sqlite,postgres] [--runs N] [--file name-in-corpus-large]
//   defaults: both stores (PostgreSQL skipped, saying so, when it does not answer), 3 runs each, bjbraams'
//   198k short games (16 MB): the file whose rows are cheapest to make, where the indexes weigh most.
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/index.ts';
import { CORPUS } from '../test/helpers/corpus.ts';
import { type Dialect, forEachStore, withScratchStore } from './support.ts';

const { values } = parseArgs({
  options: {
    stores: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '3' },
    file: { type: 'string', default: 'stockfish-books__bjbraams_chessdb_198350_lines.pgn' },
  },
});
const RUNS = Number(values.runs);
const FILE = resolve(join(CORPUS, 'large'), values.file);
const BIN = new URL('../bin/chessport.js', import.meta.url).pathname;

/**
 * The indexes of migration 0015 (src/store/migrations/0015_game_filter_indexes.ts) and 0016's partial
 * games_owner_changed, which an import gives no entry.
 */
const FILTER_INDEXES = [
  'games_owner_white_name',
  'games_owner_black_name',
  'games_owner_white_fide_id',
  'games_owner_black_fide_id',
  'games_owner_date',
  'games_owner_eco',
  'games_owner_event',
  'games_owner_result',
  'games_owner_changed',
];

/** Seconds and games of one import of FILE into a fresh store, with or without the filter indexes. */
async function importOnce(dialect: Dialect, indexes: boolean): Promise<{ seconds: number; games: number }> {
  let outcome = { seconds: Number.NaN, games: 0 };
  await withScratchStore(dialect, 'chessport_bench_filter_indexes', async (databaseUrl) => {
    const env = { ...process.env, DATABASE_URL: databaseUrl };
    execFileSync(process.execPath, [BIN, 'users', 'add', 'bench'], { env, stdio: 'ignore' });
    if (!indexes) {
      const store = await openStore(databaseUrl);
      for (const name of FILTER_INDEXES) await store.db.schema.dropIndex(name).execute();
      await store.close();
    }
    const started = performance.now();
    const out = execFileSync(
      process.execPath,
      [BIN, 'import', FILE, '--user', 'bench', '--database', 'bench', '--json'],
      { env, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const seconds = (performance.now() - started) / 1000;
    const summary = JSON.parse(out.toString()) as { files: { games: number }[] };
    outcome = { seconds, games: summary.files[0]?.games ?? 0 };
  });
  return outcome;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

await forEachStore(values.stores, async (dialect) => {
  const times = { with: [] as number[], without: [] as number[] };
  let games = 0;
  for (let run = 0; run < RUNS; run++) {
    // Alternating which goes first, so that neither always meets the machine's other load first.
    const order = run % 2 === 0 ? ([true, false] as const) : ([false, true] as const);
    for (const indexes of order) {
      const { seconds, games: imported } = await importOnce(dialect, indexes);
      games = imported;
      times[indexes ? 'with' : 'without'].push(seconds);
    }
  }
  const withIndexes = median(times.with);
  const without = median(times.without);
  console.log(`\n${dialect}: ${values.file}, ${games.toLocaleString('en')} games, ${RUNS} runs each`);
  console.log('| store | filter indexes | median s | games/s | runs (s) |');
  console.log('|---|---|---:|---:|---|');
  for (const [name, runs, value] of [
    ['with (0015, 0016)', times.with, withIndexes],
    ['without', times.without, without],
  ] as const) {
    console.log(
      `| ${dialect} | ${name} | ${value.toFixed(1)} | ${Math.round(games / value).toLocaleString('en')} | ` +
        `${runs.map((s) => s.toFixed(1)).join(', ')} |`,
    );
  }
  console.log(`time with / without: ${(withIndexes / without).toFixed(2)}`);
});
