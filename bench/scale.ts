// Scale-out figures on PostgreSQL: a store of 1,000,000 games (real games, repeated as distinct copies, over
// 100 users), the API's throughput on ONE and on TWO `chessport serve` instances sharing that PostgreSQL and
// one Redis (bare-Fastify baselines in the same run), the PGN export with the instances' memory, and the
// store's size on disk per game, next to SQLite's for a smaller fill.
// Usage: node bench/scale.ts [--games N] [--refill] [--seconds S] [--sqlite-games N] [--workers W]
//   defaults: 1000000 games, 8 s per case, 100000 games in the SQLite comparison (0 skips it), 2 writers.
// PostgreSQL: BENCH_POSTGRES_URL, else TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres;
// the bench makes (and keeps) database chessport_bench_1m (chessport_bench_<N> for other sizes) there, and a
// later run reuses it when its fill is complete (--refill forces a new one). Skips, exit 0, when PostgreSQL
// does not answer. Redis: BENCH_REDIS_URL, else TEST_REDIS_URL, else redis://127.0.0.1:6379 (without it the
// instances count rate limits each on their own, and the bench says so).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { openStore, type Store } from '../src/store/index.ts';
import {
  checkCopies,
  DEFAULT_PLAN,
  distinctRecords,
  FILL_BATCH,
  type FillPlan,
  type FillSummary,
  fillStore,
  type Layout,
  readLayout,
  readMarker,
} from './scale-fill.ts';
import {
  type ExportRun,
  exportRun,
  freePort,
  type LoadTarget,
  loadSpread,
  printExportRuns,
  printRows,
  type Row,
  sampleRecords,
  startBaseline,
  stop,
  waitUntilUp,
} from './support.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const { values: options } = parseArgs({
  options: {
    games: { type: 'string', default: '1000000' },
    refill: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '8' },
    'sqlite-games': { type: 'string', default: '100000' },
    workers: { type: 'string', default: '2' },
  },
});
const GAMES = Number(options.games);
const SECONDS = Number(options.seconds);
const SQLITE_GAMES = Number(options['sqlite-games']);
const WORKERS = Number(options.workers);
/** Real games the copies are made from (TWIC 920 holds 2,245). */
const DISTINCT = 2000;
/** Client connections of every load case, split evenly over the instances under test. */
const CONNECTIONS = 10;

const POSTGRES_URL =
  process.env.BENCH_POSTGRES_URL ||
  process.env.TEST_POSTGRES_URL ||
  'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL || process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const BENCH_DATABASE = GAMES === 1_000_000 ? 'chessport_bench_1m' : `chessport_bench_${GAMES}`;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number) => (bytes / 1e6).toFixed(0);

function urlOf(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs one statement on the administrative connection, or says why PostgreSQL cannot be used. */
async function adminQuery<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

// ---- the PostgreSQL store ------------------------------------------------------------------------------

/** The bench database, filled and complete: reused when a previous run finished its fill, else (re)made. */
async function filledPostgres(): Promise<{ store: Store; fill: FillSummary; reused: boolean }> {
  const url = urlOf(BENCH_DATABASE);
  const exists =
    (await adminQuery('select 1 from pg_database where datname = $1', [BENCH_DATABASE])).length > 0;
  if (exists && !options.refill) {
    const store = await openStore(url, { poolMax: WORKERS + 1 });
    const marker = await readMarker(store);
    if (marker?.plan.games === GAMES) return { store, fill: marker, reused: true };
    await store.close();
    console.log(`${BENCH_DATABASE} holds no complete fill of ${fmt(GAMES)} games: filling it again`);
  }
  if (exists) await adminQuery(`drop database ${BENCH_DATABASE} with (force)`);
  await adminQuery(`create database ${BENCH_DATABASE}`);
  const store = await openStore(url, { poolMax: WORKERS + 1 });
  const fill = await fillPlan(store, { ...DEFAULT_PLAN, games: GAMES });
  // What autovacuum would do on a live server; without it the first reads set hint bits and plan blindly.
  const started = performance.now();
  await adminOn(url, 'vacuum analyze');
  console.log(`vacuum analyze: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  // The copies must be distinct games, as the importer would see them: no two with the same export PGN.
  const [counts] = await adminOn<{ games: number; distinct: number }>(
    url,
    'select count(*)::int as games, count(distinct content_hash)::int as distinct from games',
  );
  console.log(`distinct games: ${fmt(counts?.distinct ?? 0)} of ${fmt(counts?.games ?? 0)}`);
  if (counts?.distinct !== GAMES) throw new Error('the fill is not made of distinct games');
  return { store, fill, reused: false };
}

async function fillPlan(store: Store, plan: FillPlan): Promise<FillSummary> {
  const sample = distinctRecords(await sampleRecords(DISTINCT));
  checkCopies(sample);
  console.log(
    `filling ${store.dialect.name} with ${fmt(plan.games)} games: ${sample.length} real TWIC games, repeated as ` +
      `distinct copies (another Round), ${plan.users} users x ${plan.databasesPerUser} databases + one archive`,
  );
  return fillStore(store, plan, sample, {
    workers: WORKERS,
    progress: (done, seconds) =>
      console.log(`  ${fmt(done).padStart(10)} games  ${fmt(done / seconds).padStart(7)} games/s`),
  });
}

async function adminOn<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

interface TableSize {
  name: string;
  heap: number;
  toast: number;
  indexes: number;
  total: number;
}

/** Each table's bytes on disk: heap, TOAST, indexes (pg_total_relation_size = all three). */
async function postgresSizes(url: string): Promise<TableSize[]> {
  const rows = await adminOn<{ name: string; heap: string; indexes: string; total: string }>(
    url,
    `select c.relname as name, pg_relation_size(c.oid) as heap, pg_indexes_size(c.oid) as indexes,
            pg_total_relation_size(c.oid) as total
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'r'
      order by pg_total_relation_size(c.oid) desc`,
  );
  return rows.map((r) => {
    const [heap, indexes, total] = [Number(r.heap), Number(r.indexes), Number(r.total)];
    return { name: r.name, heap, indexes, total, toast: total - heap - indexes };
  });
}

// ---- the SQLite comparison -----------------------------------------------------------------------------

async function sqliteFigures(games: number): Promise<{ bytes: number; fill: FillSummary }> {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-scale-'));
  try {
    const file = join(dir, 'store.sqlite');
    const store = await openStore(file);
    const fill = await fillPlan(store, { ...DEFAULT_PLAN, games });
    await store.close(); // closing the last connection checkpoints the WAL into the file
    const wal = `${file}-wal`;
    return { bytes: statSync(file).size + (existsSync(wal) ? statSync(wal).size : 0), fill };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the instances -------------------------------------------------------------------------------------

interface Instance {
  child: ChildProcess;
  base: string;
}

async function startInstance(env: NodeJS.ProcessEnv): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'bin/chessport.js'), 'serve', '--port', String(port)], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${base}/readyz`);
  return { child, base };
}

/** Per user: the token header, and a few of the user's game ids. */
interface Reader {
  headers: Record<string, string>;
  ids: string[];
}

async function readersOf(store: Store, layout: Layout, base: string): Promise<Reader[]> {
  const app =
    (await store.accounts.findApp('bench-scale')) ?? (await store.accounts.addApp({ name: 'bench-scale' }));
  const readers: Reader[] = [];
  for (const user of layout.users) {
    const { token } = await store.tokens.issue({
      userId: user.id,
      appId: app.id,
      scopes: ['games.read', 'databases.read'],
      expiresAt: Date.now() + 86_400_000, // a day: the tokens of old runs expire
    });
    const headers = { authorization: `Bearer ${token}` };
    const page = (await (await fetch(`${base}/api/v1/games?limit=50`, { headers })).json()) as {
      data: { id: string }[];
    };
    readers.push({ headers, ids: page.data.slice(0, 5).map((g) => g.id) });
  }
  return readers;
}

/** The same requests, spread over the given bases with CONNECTIONS connections in all. */
function targets(
  bases: string[],
  requests: { path: string; headers: Record<string, string> }[],
): LoadTarget[] {
  return bases.map((base) => ({ url: base, requests, connections: CONNECTIONS / bases.length }));
}

/** One export of the archive from each instance at once; wall time for the combined games/s. */
async function exportAll(instances: Instance[], path: string, headers: Record<string, string>) {
  const started = performance.now();
  const runs = await Promise.all(
    instances.map((i) => exportRun(`${i.base}${path}`, headers, i.child.pid as number)),
  );
  return { runs, seconds: (performance.now() - started) / 1000 };
}

// ---- main ----------------------------------------------------------------------------------------------

try {
  await adminQuery('select 1');
} catch (error) {
  const where = new URL(POSTGRES_URL);
  where.password = '';
  console.log(
    `bench/scale.ts: skipped: PostgreSQL does not answer at ${where} (${(error as Error).message}); ` +
      'set BENCH_POSTGRES_URL or TEST_POSTGRES_URL to a server where databases may be created',
  );
  process.exit(0);
}

const redis = await redisAnswers();
const prefix = `chessport-bench:${process.pid}:`;
const instances: Instance[] = [];
const baselines: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-scale-'));
let store: Store | undefined;
try {
  // ---- the store -----------------------------------------------------------------------------------------
  const filled = await filledPostgres();
  store = filled.store;
  const { fill } = filled;
  const layout = await readLayout(store);
  const archiveGames = await store.databases.countGames(layout.archive.id);
  const sizes = await postgresSizes(urlOf(BENCH_DATABASE));

  // ---- two instances, one Redis -------------------------------------------------------------------------
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: urlOf(BENCH_DATABASE),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000000',
    REDIS_PREFIX: prefix,
  };
  if (redis) env.REDIS_URL = REDIS_URL;
  else delete env.REDIS_URL;
  instances.push(await startInstance(env), await startInstance(env));
  const [one, two] = instances as [Instance, Instance];
  const readers = await readersOf(store, layout, one.base);
  const first = readers[0] as Reader;
  const bodyFile = join(dir, 'games.json');
  writeFileSync(
    bodyFile,
    await (await fetch(`${one.base}/api/v1/games?limit=50`, { headers: first.headers })).text(),
  );

  // ---- the export first: on fresh instances the RSS shows what streaming itself costs --------------
  const exportPath = `/api/v1/databases/${layout.archive.slug}/games?format=pgn`;
  await exportAll([one], exportPath, first.headers); // warm-up
  const single: ExportRun[] = [];
  for (let i = 0; i < 2; i++)
    single.push((await exportAll([one], exportPath, first.headers)).runs[0] as ExportRun);
  const pairs = [];
  for (let i = 0; i < 2; i++) pairs.push(await exportAll([one, two], exportPath, first.headers));

  // ---- requests/s: baselines, then each endpoint on one instance and on two -------------------------
  const bare = [await startBaseline(bodyFile), await startBaseline(bodyFile)];
  baselines.push(...bare.map((b) => b.child));
  const bareOne = await loadSpread(
    'baseline: 1 bare Fastify, static 50 games',
    [{ url: bare[0]?.url ?? '', connections: CONNECTIONS }],
    SECONDS,
  );
  const bareTwo = await loadSpread(
    'baseline: 2 bare Fastify, static 50 games',
    bare.map((b) => ({ url: b.url, connections: CONNECTIONS / 2 })),
    SECONDS,
  );
  for (const child of baselines) await stop(child);
  bareOne.reference = bareOne.rps;
  bareTwo.reference = bareTwo.rps;

  const cases: [string, { path: string; headers: Record<string, string> }[]][] = [
    ['GET /games?limit=50', readers.map((r) => ({ path: '/api/v1/games?limit=50', headers: r.headers }))],
    [
      'GET /games/{id}',
      readers.flatMap((r) => r.ids.map((id) => ({ path: `/api/v1/games/${id}`, headers: r.headers }))),
    ],
    [
      'GET /changes?limit=500',
      readers.map((r) => ({ path: '/api/v1/changes?limit=500', headers: r.headers })),
    ],
  ];
  const rows: Row[] = [bareOne, bareTwo];
  for (const [name, requests] of cases) {
    const alone = await loadSpread(`${name}, 1 instance`, targets([one.base], requests), SECONDS);
    const both = await loadSpread(`${name}, 2 instances`, targets([one.base, two.base], requests), SECONDS);
    alone.reference = bareOne.rps;
    both.reference = bareTwo.rps;
    rows.push(alone, both);
  }

  // ---- the SQLite comparison ----------------------------------------------------------------------------
  // autocannon stops mid-request: let the instances finish what they were answering before they stop.
  await new Promise((r) => setTimeout(r, 1000));
  for (const instance of instances) await stop(instance.child);
  const sqlite = SQLITE_GAMES > 0 ? await sqliteFigures(SQLITE_GAMES) : undefined;

  // ---- report -------------------------------------------------------------------------------------------
  const plan = fill.plan;
  console.log(
    `\nStore: PostgreSQL database ${BENCH_DATABASE}, ${fmt(plan.games)} games (${fill.distinct} real games x ` +
      `${Math.ceil(plan.games / fill.distinct)} copies), ${plan.users} users x ${plan.databasesPerUser} ` +
      `databases + an archive of ${fmt(archiveGames)} games`,
  );
  console.log(
    `fill: ${fmt(fill.fillSeconds)} s, ${fmt(fill.gamesPerSecond)} games/s (${WORKERS} writers, ` +
      `${fmt(FILL_BATCH)}-game transactions through store.games.insert)` +
      (filled.reused ? `, reused: filled at ${fill.finishedAt}` : ''),
  );
  if (sqlite)
    console.log(
      `SQLite, ${fmt(SQLITE_GAMES)} games, same layout: ${fmt(sqlite.fill.fillSeconds)} s, ` +
        `${fmt(sqlite.fill.gamesPerSecond)} games/s`,
    );

  console.log(`\nSize on disk\n`);
  console.log(
    `${'table'.padEnd(12)} ${'heap MB'.padStart(9)} ${'TOAST MB'.padStart(9)} ${'index MB'.padStart(9)} ${'total MB'.padStart(9)} ${'bytes/game'.padStart(11)}`,
  );
  for (const t of sizes.filter((s) => s.total > 1e6)) {
    console.log(
      `${t.name.padEnd(12)} ${mb(t.heap).padStart(9)} ${mb(t.toast).padStart(9)} ${mb(t.indexes).padStart(9)} ${mb(t.total).padStart(9)} ${fmt(t.total / plan.games).padStart(11)}`,
    );
  }
  const total = sizes.reduce((sum, t) => sum + t.total, 0);
  console.log(
    `${'PostgreSQL'.padEnd(12)} ${''.padStart(9)} ${''.padStart(9)} ${''.padStart(9)} ${mb(total).padStart(9)} ${fmt(total / plan.games).padStart(11)}   (every table, ${fmt(plan.games)} games)`,
  );
  if (sqlite)
    console.log(
      `${'SQLite'.padEnd(12)} ${''.padStart(9)} ${''.padStart(9)} ${''.padStart(9)} ${mb(sqlite.bytes).padStart(9)} ${fmt(sqlite.bytes / SQLITE_GAMES).padStart(11)}   (the file, ${fmt(SQLITE_GAMES)} games)`,
    );

  console.log(
    `\nHTTP on ${fmt(plan.games)} games: ${CONNECTIONS} connections in all (split evenly over the instances), ` +
      `${SECONDS} s per case after a 2 s warm-up; requests cycle through ${readers.length} users' tokens; ` +
      `rate limits ${redis ? 'in one shared Redis' : 'per instance (Redis did not answer)'}; ` +
      'x baseline is against as many bare Fastify processes; p99 is the worst instance\n',
  );
  printRows(rows, 46);
  const ratio = (name: string) => {
    const alone = rows.find((r) => r.name === `${name}, 1 instance`)?.rps ?? Number.NaN;
    const both = rows.find((r) => r.name === `${name}, 2 instances`)?.rps ?? Number.NaN;
    return `${(both / alone).toFixed(2)}`;
  };
  console.log(
    `\n2 instances / 1 instance: ${cases.map(([name]) => `${name} ${ratio(name)}`).join(', ')}; ` +
      `bare Fastify ${(bareTwo.rps / bareOne.rps).toFixed(2)}`,
  );

  console.log(`\nPGN export of the archive (${fmt(archiveGames)} games)\n`);
  printExportRuns(
    [
      ...single.map((r, i) => [`1 instance, run ${i + 1}`, r] as const),
      ...pairs.flatMap((p, i) =>
        p.runs.map((r, k) => [`2 at once, run ${i + 1}, instance ${k + 1}`, r] as const),
      ),
    ],
    archiveGames,
    34,
  );
  const combined = Math.max(...pairs.map((p) => (archiveGames * p.runs.length) / p.seconds));
  const alone = Math.max(...single.map((r) => archiveGames / r.seconds));
  const growth = Math.max(...[...single, ...pairs.flatMap((p) => p.runs)].map((r) => r.peak - r.before));
  console.log(
    `\nexport: ${fmt(alone)} games/s from 1 instance, ${fmt(combined)} games/s from 2 at once (best runs); ` +
      `RSS grew at most ${growth.toFixed(0)} MB while streaming ${mb(single[0]?.bytes ?? 0)} MB`,
  );
} finally {
  for (const child of baselines) await stop(child);
  for (const instance of instances) await stop(instance.child);
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
  if (redis) {
    const client = new Redis(REDIS_URL);
    const keys = await client.keys(`${prefix}*`);
    if (keys.length) await client.del(...keys);
    await client.quit();
  }
}
