// Throughput of the API over real HTTP against `chessport serve`, next to a bare Fastify baseline measured
// in the same run, and the PGN export's games/s with the server's memory sampled while it streams.
// Usage: node bench/http.ts [--games N] [--seconds S]   (defaults: 100000 games, 8 s per case)
//
// Both servers run in their own process; autocannon runs in this one (on a 2-core machine: one core each).
// GET /games?limit=50 repeats one URL, as a client polling its first page does: after the first request the
// page cache answers it (src/api/page-cache.ts). A second server with the cache off shows the cost of
// rendering each page.
// Targets: GET /games?limit=50 at least half the baseline's requests/s; the export at least 50,000 games/s
// in flat memory.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  exportRun,
  fillBenchStore,
  freePort,
  load,
  printExportRuns,
  printRows,
  type Row,
  startBaseline,
  stop,
  waitUntilUp,
} from './support.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};

const TOTAL = arg('--games', 100_000);
const SECONDS = arg('--seconds', 8);
const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-http-'));
const databaseUrl = join(dir, 'store.sqlite');
let server: ChildProcess | undefined;
let baseline: ChildProcess | undefined;
let uncached: ChildProcess | undefined;
try {
  // ---- the store, filled directly: this measures serving, not importing ------------------------------
  const { token, database } = await fillBenchStore(databaseUrl, TOTAL, 500);

  // ---- the servers -------------------------------------------------------------------------------------
  const port = await freePort();
  const serverEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000000',
  };
  server = spawn(process.execPath, [join(ROOT, 'bin/chessport.js'), 'serve', '--port', String(port)], {
    env: serverEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token}` };
  await waitUntilUp(`${base}/api/v1/games?limit=50`, headers);
  const page = await (await fetch(`${base}/api/v1/games?limit=50`, { headers })).json();
  const ids = (page as { data: { id: string }[] }).data.map((g) => g.id);
  const bodyFile = join(dir, 'games.json');
  writeFileSync(bodyFile, JSON.stringify(page));
  const bare = await startBaseline(bodyFile);
  baseline = bare.child;

  // ---- the export, first: on a fresh server the RSS shows what streaming itself costs -------------
  const pid = server.pid as number;
  const exportUrl = `${base}/api/v1/databases/${database.slug}/games?format=pgn`;
  await exportRun(exportUrl, headers, pid); // warm-up
  const plain = [];
  for (let i = 0; i < 3; i++) plain.push(await exportRun(exportUrl, headers, pid));
  const gzip = await exportRun(exportUrl, { ...headers, 'accept-encoding': 'gzip' }, pid);

  // ---- requests/s -------------------------------------------------------------------------------------
  const rows: Row[] = [];
  rows.push(await load('baseline: bare Fastify, static 50 games', bare.url, {}, SECONDS));
  await stop(baseline);
  rows.push(await load('GET /games?limit=50', `${base}/api/v1/games?limit=50`, headers, SECONDS));
  // The same request on a server that renders every page (no page cache): what a client paging through
  // the list for the first time costs, rather than one polling a page that has not changed.
  const uncachedPort = await freePort();
  uncached = spawn(
    process.execPath,
    [join(ROOT, 'bin/chessport.js'), 'serve', '--port', String(uncachedPort)],
    { env: { ...serverEnv, PAGE_CACHE_MB: '0' }, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const uncachedUrl = `http://127.0.0.1:${uncachedPort}/api/v1/games?limit=50`;
  await waitUntilUp(uncachedUrl, headers);
  rows.push(await load('GET /games?limit=50, page cache off', uncachedUrl, headers, SECONDS));
  await stop(uncached);
  rows.push(
    await load(
      'GET /games?limit=50, gzip',
      `${base}/api/v1/games?limit=50`,
      { ...headers, 'accept-encoding': 'gzip' },
      SECONDS,
    ),
  );
  rows.push(
    await load(
      'GET /games/{id} (50 ids in turn)',
      `${base}/api/v1/games`,
      headers,
      SECONDS,
      ids.map((id) => `/api/v1/games/${id}`),
    ),
  );
  const changes = await fetch(`${base}/api/v1/changes?limit=500`, { headers });
  if (changes.status === 404 && ((await changes.json()) as { error?: string }).error === 'not_found') {
    console.log('GET /changes is not served by this build: skipped');
  } else {
    rows.push(await load('GET /changes?limit=500', `${base}/api/v1/changes?limit=500`, headers, SECONDS));
  }

  // ---- report -----------------------------------------------------------------------------------------
  const reference = rows[0]?.rps ?? Number.NaN;
  for (const row of rows) row.reference = reference;
  console.log(`\nHTTP on ${TOTAL} games, 10 connections, ${SECONDS} s per case (after a 2 s warm-up)\n`);
  printRows(rows);
  const games = rows.find((r) => r.name === 'GET /games?limit=50');
  console.log(
    `\ntarget: /games >= 0.5 x baseline: ${(games?.rps ?? 0) / reference >= 0.5 ? 'met' : 'NOT met'}`,
  );

  console.log(`\nPGN export of ${TOTAL} games, one client\n`);
  printExportRuns(
    [...plain.map((r, i) => [`identity ${i + 1}`, r] as const), ['gzip', gzip] as const],
    TOTAL,
  );
  const best = Math.max(...plain.map((r) => TOTAL / r.seconds));
  const growth = Math.max(...plain.map((r) => r.peak - r.before));
  const size = (plain[0]?.bytes ?? 0) / 1e6;
  console.log(
    `\ntarget: export >= 50000 games/s: ${best >= 50_000 ? 'met' : 'NOT met'} (best ${best.toFixed(0)}); ` +
      `RSS grew at most ${growth.toFixed(0)} MB while streaming ${size.toFixed(0)} MB`,
  );
} finally {
  await stop(baseline);
  await stop(uncached);
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
