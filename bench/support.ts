// What the benches share: a sample of real game records, scratch stores on SQLite and PostgreSQL, free ports,
// the servers under test (chessport and the bare-Fastify baseline), percentiles, autocannon load with its
// table, and the PGN export run with its table.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { normalizeGame, PgnSplitter } from '../src/chess/index.ts';
import { toGameRecord } from '../src/import/index.ts';
import {
  type App,
  type Database,
  type GameRecord,
  openStore,
  type Store,
  type User,
} from '../src/store/index.ts';
import { CORPUS } from '../test/helpers/corpus.ts';

const SOURCE = join(CORPUS, 'large/notnil_chess__twic0920.pgn');
const BASELINE = new URL('./baseline.ts', import.meta.url).pathname;
const CHESSPORT = new URL('../bin/chessport.js', import.meta.url).pathname;

/** Up to `distinct` records from TWIC 920, or generated games when the shared corpus is absent. */
export async function sampleRecords(distinct: number): Promise<GameRecord[]> {
  let text: string;
  if (existsSync(SOURCE)) {
    text = readFileSync(SOURCE, 'latin1');
  } else {
    // Without the shared corpus: generated games (shorter than real ones, so the export looks faster).
    text = Array.from(
      { length: distinct },
      (_, i) =>
        `[Event "Bench"]\n[White "White ${i}"]\n[Black "Black ${i}"]\n[Result "1-0"]\n\n` +
        '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 1-0\n',
    ).join('\n');
  }
  const splitter = new PgnSplitter();
  const records: GameRecord[] = [];
  for (const raw of [...splitter.push(text), ...splitter.end()]) {
    const result = normalizeGame(raw.text);
    if (result.ok) records.push(toGameRecord(result.game));
    if (records.length === distinct) break;
  }
  return records;
}

/** User "bench" with an app, a games.read token and one database "Bench": the reader every bench measures. */
export async function addBenchReader(
  store: Store,
): Promise<{ user: User; app: App; token: string; database: Database }> {
  const user = await store.accounts.addUser({ login: 'bench' });
  const app = await store.accounts.addApp({ name: 'bench' });
  const { token } = await store.tokens.issue({
    userId: user.id,
    appId: app.id,
    scopes: ['games.read'],
    expiresAt: null,
  });
  const database = await store.databases.add({ ownerId: user.id, name: 'Bench' });
  return { user, app, token, database };
}

/**
 * A store at databaseUrl holding `games` games (`distinct` real ones repeated, duplicates allowed) in the
 * database of the bench reader, and its games.read token: the benches measure reading, not importing.
 * With `copy` on PostgreSQL, only the `distinct` games go through the store's import batches; the rest are
 * copies of them made by SQL (copyPostgresGames), as fast as PostgreSQL writes rows.
 */
export async function fillBenchStore(
  databaseUrl: string,
  games: number,
  distinct: number,
  options: { copy?: boolean } = {},
): Promise<{ token: string; database: Database; distinct: number; seconds: number; changedUntil: number }> {
  const store = await openStore(databaseUrl);
  const { token, database } = await addBenchReader(store);
  const records = await sampleRecords(distinct);
  const started = performance.now();
  let changedUntil: number;
  const copy = options.copy === true && store.dialect.name === 'postgres';
  const through = copy ? Math.min(games, records.length) : games;
  for (let done = 0; done < through; done += 5000) {
    const batch = Array.from(
      { length: Math.min(5000, through - done) },
      (_, i) => records[(done + i) % records.length] as GameRecord,
    );
    await store.games.insert(database, batch, true);
  }
  changedUntil = Date.now();
  await store.close();
  if (copy && games > through)
    changedUntil = await copyPostgresGames(databaseUrl, database.id, games - through);
  const seconds = (performance.now() - started) / 1000;
  return { token, database, distinct: records.length, seconds, changedUntil };
}

/**
 * Adds `copies` games to the database by copying its games in SQL, round after round in import order, as an
 * import of the same file again and again (duplicates allowed) would: each copy a new id (a random UUID),
 * the next pk and change sequence value, and a change time that rises with them and ends at the fill's end
 * (one millisecond apart, after the imported games' times, moved back for it); the database's kept count, its games_seq and the owner's feed head follow. Then
 * VACUUM ANALYZE, as autovacuum would have done on a store that grew over time: the statistics and the
 * visibility map that index-only scans need. Returns the change time of the last copy.
 */
async function copyPostgresGames(databaseUrl: string, databaseId: string, copies: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const base = await client.query<{ n: string; pk: string }>(
      'select count(*) as n, max(pk) as pk from games where database_id = $1',
      [databaseId],
    );
    const distinct = Number(base.rows[0]?.n);
    const lastBasePk = Number(base.rows[0]?.pk);
    const now = Date.now();
    // The imported games' change times moved to just before the first copy's, so that times rise with pk and
    // seq as in a store that grew over time (the store's reads rely on it: GameReads.changedSplit).
    await client.query(
      `update games g set created_at = s.t, updated_at = s.t
       from (select pk, $2::bigint - $3::bigint - count(*) over () + row_number() over (order by pk) as t
             from games where database_id = $1 and pk <= $4) s
       where g.pk = s.pk`,
      [databaseId, now, copies, lastBasePk],
    );
    const columns =
      'owner_id, database_id, slug, event, date, result, eco, white_name, white_elo, white_fide_id, ' +
      'white_country, black_name, black_elo, black_fide_id, black_country, metadata, moves, fen, pgn, ' +
      'content_hash, deleted, dedup_key';
    // Rounds of at most 100,000 games, each its own statement, so that no transaction grows huge.
    for (let done = 0; done < copies; done += 100_000) {
      const n = Math.min(100_000, copies - done);
      // n consecutive values of the change sequence, the last of them returned (nothing else writes).
      const seqs = await client.query<{ seq: string }>(
        "select setval('change_seq', nextval('change_seq') + $1::bigint - 1) as seq",
        [n],
      );
      const lastSeq = Number(seqs.rows[0]?.seq);
      await client.query(
        `insert into games (id, seq, created_at, updated_at, ${columns})
         select gen_random_uuid()::text, $2::bigint - $1::bigint + i, t, t, ${columns}
         from (
           select g.*, row_number() over (order by k, g.pk) as i,
             $3::bigint - ($4::bigint - ($5::bigint + row_number() over (order by k, g.pk))) as t
           from generate_series(0, ($1::bigint - 1) / $6::bigint) k
           cross join games g
           where g.database_id = $7 and g.pk <= $8
           order by k, g.pk
           limit $1
         ) copied
         order by i`,
        [n, lastSeq, now, copies, done, distinct, databaseId, lastBasePk],
      );
      await client.query(
        `update databases set game_count = game_count + $1, games_seq = $2, updated_at = $3 where id = $4`,
        [n, lastSeq, now, databaseId],
      );
    }
    await client.query(
      'update feed_heads set change_time = greatest(change_time, $1) where user_id = ' +
        '(select owner_id from databases where id = $2)',
      [now, databaseId],
    );
    await client.query('vacuum analyze games');
    return now;
  } finally {
    await client.end();
  }
}

// ---- scratch stores --------------------------------------------------------------------------------------

export type Dialect = 'sqlite' | 'postgres';

/** Where the benches make their PostgreSQL databases. */
export const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ||
  process.env.TEST_POSTGRES_URL ||
  'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on POSTGRES_URL's administrative connection (e.g. create or drop a database). */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Runs `measure` on an empty store of the dialect: a SQLite file in a temporary folder, or the PostgreSQL
 * database `name` (made for it on POSTGRES_URL), and removes that store afterwards, whether `measure` threw
 * or not.
 */
export async function withScratchStore(
  dialect: Dialect,
  name: string,
  measure: (databaseUrl: string) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `${name.replaceAll('_', '-')}-`));
  let databaseUrl = join(dir, 'store.sqlite');
  if (dialect === 'postgres') {
    await adminQuery(`create database ${name}`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  try {
    await measure(databaseUrl);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (dialect === 'postgres') await adminQuery(`drop database if exists ${name} with (force)`);
  }
}

/**
 * Runs `bench` for each store of the comma-separated list `stores` (sqlite, postgres) in turn; PostgreSQL is
 * skipped, with a line saying so, when POSTGRES_URL does not answer.
 */
export async function forEachStore(
  stores: string,
  bench: (dialect: Dialect) => Promise<void>,
): Promise<void> {
  for (const dialect of stores.split(',').filter(Boolean)) {
    if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`--stores: unknown store ${dialect}`);
    if (dialect === 'postgres') {
      const answers = await adminQuery('select 1').then(
        () => true,
        () => false,
      );
      if (!answers) {
        console.log(`\npostgres: skipped, ${POSTGRES_URL} does not answer`);
        continue;
      }
    }
    await bench(dialect);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

// ---- servers under test --------------------------------------------------------------------------------

export async function waitUntilUp(url: string, headers: Record<string, string> = {}): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      if ((await fetch(url, { headers })).ok) return;
    } catch (error) {
      if (tries > 400) throw error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Starts `chessport serve` on a free port with `env` added to this process's environment; returns the child
 * and its origin (http://127.0.0.1:port) at once, before the server is up: the caller waits on a request of
 * its own choice.
 */
export async function startChessport(
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [CHESSPORT, 'serve', '--port', String(port)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return { child, origin: `http://127.0.0.1:${port}` };
}

/** Starts the bare-Fastify baseline (bench/baseline.ts) serving `bodyFile` at /games; returns it once up. */
export async function startBaseline(bodyFile: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BASELINE, String(port), bodyFile], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}/games`;
  await waitUntilUp(url);
  return { child, url };
}

/** Resident memory of a process, in MB (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** The value below which p percent of the ascending `sorted` lie (NaN when there are none). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

// ---- requests/s ------------------------------------------------------------------------------------------

export interface Row {
  name: string;
  rps: number;
  p99: number;
  /** Answers that were not 2xx, plus errors and timeouts. */
  failed: number;
  /** The requests/s this row is compared with (x baseline). */
  reference?: number;
}

/** One autocannon target: a URL, and optionally the requests each connection sends in turn. */
export interface LoadTarget {
  url: string;
  headers?: Record<string, string>;
  /** Paths (with their own headers, e.g. one token per user) sent in turn instead of `url`'s path. */
  requests?: { path: string; headers?: Record<string, string> }[];
  connections?: number;
}

function cannonOptions(target: LoadTarget, seconds: number): autocannon.Options {
  return {
    url: target.url,
    headers: target.headers ?? {},
    connections: target.connections ?? 10,
    duration: seconds,
    ...(target.requests && {
      requests: target.requests.map(({ path, headers }) => ({
        method: 'GET' as const,
        path,
        ...(headers && { headers }),
      })),
    }),
  };
}

/**
 * Load on one or several targets at once (e.g. two instances behind no balancer: the client spreads the load
 * itself). Requests/s add up; p99 is the worst of the targets' p99s (autocannon keeps no mergeable histogram).
 */
export async function loadSpread(name: string, targets: LoadTarget[], seconds: number): Promise<Row> {
  // Warm-up: JIT, page cache, connections, statement caches.
  await Promise.all(targets.map((t) => autocannon(cannonOptions(t, 2))));
  const results = await Promise.all(targets.map((t) => autocannon(cannonOptions(t, seconds))));
  return {
    name,
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    failed: results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0),
  };
}

export async function load(
  name: string,
  url: string,
  headers: Record<string, string>,
  seconds: number,
  paths?: string[],
): Promise<Row> {
  return loadSpread(
    name,
    [{ url, headers, ...(paths && { requests: paths.map((path) => ({ path })) }) }],
    seconds,
  );
}

/** The requests/s table: one line per row, `x baseline` against the row's reference. */
export function printRows(rows: Row[], nameWidth = 40): void {
  console.log(
    `${'case'.padEnd(nameWidth)} ${'req/s'.padStart(9)} ${'p99 ms'.padStart(8)} ${'x baseline'.padStart(11)}`,
  );
  for (const row of rows) {
    const errors = row.failed ? `  (${row.failed} non-2xx or failed!)` : '';
    const ratio = row.reference ? (row.rps / row.reference).toFixed(2) : '';
    console.log(
      `${row.name.padEnd(nameWidth)} ${row.rps.toFixed(0).padStart(9)} ${row.p99.toFixed(1).padStart(8)} ${ratio.padStart(11)}${errors}`,
    );
  }
}

// ---- the PGN export --------------------------------------------------------------------------------------

export interface ExportRun {
  seconds: number;
  bytes: number;
  /** The server's RSS in MB before, at its highest during, and after the export. */
  before: number;
  peak: number;
  after: number;
}

/** Reads a whole export as fast as this process can, sampling the server's RSS meanwhile. */
export async function exportRun(
  url: string,
  headers: Record<string, string>,
  pid: number,
): Promise<ExportRun> {
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 20);
  const started = performance.now();
  try {
    const bytes = await new Promise<number>((resolve, reject) => {
      get(url, { headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`export: ${res.statusCode}`));
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
        });
        res.on('end', () => resolve(total));
        res.on('error', reject);
      }).on('error', reject);
    });
    const seconds = (performance.now() - started) / 1000;
    return { seconds, bytes, before, peak, after: rssMb(pid) };
  } finally {
    clearInterval(sampler);
  }
}

/** The export table: one line per run of `games` games. */
export function printExportRuns(runs: (readonly [string, ExportRun])[], games: number, nameWidth = 12): void {
  console.log(
    `${'run'.padEnd(nameWidth)} ${'seconds'.padStart(8)} ${'games/s'.padStart(9)} ${'MB/s sent'.padStart(10)} ${'RSS before'.padStart(11)} ${'peak'.padStart(7)} ${'after'.padStart(7)}`,
  );
  for (const [name, r] of runs) {
    console.log(
      `${name.padEnd(nameWidth)} ${r.seconds.toFixed(2).padStart(8)} ${(games / r.seconds).toFixed(0).padStart(9)} ${(r.bytes / 1e6 / r.seconds).toFixed(1).padStart(10)} ${r.before.toFixed(0).padStart(10)}M ${r.peak.toFixed(0).padStart(6)}M ${r.after.toFixed(0).padStart(6)}M`,
    );
  }
}
