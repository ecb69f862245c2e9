// Latency of GET /changes over real HTTP against `chessport serve`, on a store of 100,000+ games.
// Usage: node bench/feed.ts [--games N]   (default 100000; games are real TWIC #920 games, repeated)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillBenchStore, freePort } from './support.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const gamesArg = process.argv.indexOf('--games');
const TOTAL = gamesArg > 0 ? Number(process.argv[gamesArg + 1]) : 100_000;
const DISTINCT = 500;
const PAGE = 500;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Row {
  case: string;
  requests: number;
  items: number;
  p50: number;
  p99: number;
  max: number;
}

function row(name: string, latencies: number[], items: number): Row {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    case: name,
    requests: latencies.length,
    items,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-feed-'));
const databaseUrl = join(dir, 'store.sqlite');
let server: ReturnType<typeof spawn> | undefined;
try {
  // ---- fill the store directly: the bench measures reading, not importing --------------------------
  const filled = await fillBenchStore(databaseUrl, TOTAL, DISTINCT);
  const { token } = filled;
  console.log(
    `filled ${TOTAL} games (${filled.distinct} distinct TWIC games repeated) in ${filled.seconds.toFixed(1)} s`,
  );

  // ---- a real server in its own process ---------------------------------------------------------------
  const port = await freePort();
  server = spawn(process.execPath, [join(ROOT, 'bin/chessport.js'), 'serve', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000000' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  const headers = { authorization: `Bearer ${token}` };
  for (let tries = 0; ; tries++) {
    try {
      if ((await fetch(`${base}/changes?limit=1`, { headers })).ok) break;
    } catch (error) {
      if (tries > 200) throw error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  const timed = async (query: string) => {
    const start = performance.now();
    const response = await fetch(`${base}/changes?${query}`, { headers });
    const body = (await response.json()) as {
      data: { updatedAt: string }[];
      nextCursor: string;
      hasMore: boolean;
    };
    if (!response.ok) throw new Error(`${query}: ${response.status} ${JSON.stringify(body)}`);
    return { ms: performance.now() - start, body };
  };

  /** Follows the whole feed from `first` and returns the latency of every page. */
  const walk = async (first: string) => {
    const latencies: number[] = [];
    let items = 0;
    let query = first;
    let middle = '';
    for (;;) {
      const { ms, body } = await timed(query);
      latencies.push(ms);
      items += body.data.length;
      if (latencies.length === Math.ceil(TOTAL / PAGE / 2)) middle = body.data[0]?.updatedAt ?? '';
      if (!body.hasMore) return { latencies, items, end: body.nextCursor, middle };
      query = `limit=${PAGE}&cursor=${body.nextCursor}`;
    }
  };

  await walk(`limit=${PAGE}`); // warm-up: page cache and JIT
  const started = performance.now();
  const full = await walk(`limit=${PAGE}`);
  const walkSeconds = (performance.now() - started) / 1000;
  const rows: Row[] = [row(`full backfill, limit=${PAGE}`, full.latencies, full.items)];

  const tail: number[] = [];
  for (let i = 0; i < 50; i++) tail.push((await timed(`limit=${PAGE}&cursor=${full.end}`)).ms);
  rows.push(row('caught up (empty page)', tail, 0));

  // since binary-searches the owner's games by seq for the first one at or after the time.
  const sinceCases: [string, string][] = [
    ['since: before everything', '2000-01-01T00:00:00.000Z'],
    ['since: the middle', full.middle],
    ['since: after everything', '2999-01-01T00:00:00.000Z'],
  ];
  for (const [name, since] of sinceCases) {
    const latencies: number[] = [];
    let items = 0;
    for (let i = 0; i < 20; i++) {
      const { ms, body } = await timed(`limit=${PAGE}&since=${since}`);
      latencies.push(ms);
      items = body.data.length;
    }
    rows.push(row(name, latencies, items));
  }

  console.log(
    `\nGET /changes over HTTP, ${TOTAL} games, one client, sequential requests (ms per request, body read)\n`,
  );
  const fmt = (n: number) => n.toFixed(1).padStart(7);
  console.log(
    `${'case'.padEnd(34)} ${'requests'.padStart(8)} ${'items'.padStart(7)}     p50     p99     max`,
  );
  for (const r of rows) {
    console.log(
      `${r.case.padEnd(34)} ${String(r.requests).padStart(8)} ${String(r.items).padStart(7)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.max)}`,
    );
  }
  console.log(
    `\nfull backfill: ${full.items} changes in ${walkSeconds.toFixed(2)} s, ${Math.round(full.items / walkSeconds)} changes/s`,
  );
} finally {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server?.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
