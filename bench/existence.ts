// Whether answers give away that another user's game exists: the time of GET /games/{id} and of GET
// /games?ids= for another user's ids against ids that exist nowhere, asked by one token, interleaved in
// random order in the same run (the answers themselves are identical: test/api/filters.test.ts and
// test/api/resources.test.ts check that). The token's own games are timed too, to show what a found game
// costs and so how large a difference the bench can see.
// Usage: node bench/existence.ts [--games N] [--rounds R]   (defaults: 20000 games for each user, 2000 rounds)
//
// Target: another user's ids within 10% of unknown ids at p50, for one id and for 200 ids in one request.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GameRecord, openStore } from '../src/store/index.ts';
import { fillBenchStore, percentile, sampleRecords, startChessport, stop, waitUntilUp } from './support.ts';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const GAMES = arg('--games', 20_000);
const ROUNDS = arg('--rounds', 2000);
const BULK = 200;

const dir = mkdtempSync(join(tmpdir(), 'chessport-bench-existence-'));
const databaseUrl = join(dir, 'store.sqlite');
let server: ChildProcess | undefined;
try {
  const { token } = await fillBenchStore(databaseUrl, GAMES, 500);
  // Another user with as many games, whose ids the reader then asks for.
  const store = await openStore(databaseUrl);
  const other = await store.accounts.addUser({ login: 'other' });
  const theirs = await store.databases.add({ ownerId: other.id, name: 'Theirs' });
  const records = await sampleRecords(500);
  const foreign: string[] = [];
  for (let done = 0; done < GAMES; done += 5000) {
    const batch = Array.from(
      { length: Math.min(5000, GAMES - done) },
      (_, i) => records[(done + i) % records.length] as GameRecord,
    );
    foreign.push(...(await store.games.insert(theirs, batch, true)).ids);
  }
  await store.close();

  const started = await startChessport({
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000000',
  });
  server = started.child;
  const base = `${started.origin}/api/v1`;
  const headers = { authorization: `Bearer ${token}` };
  await waitUntilUp(`${base}/games?limit=1`, headers);
  const page = (await (await fetch(`${base}/games?limit=200`, { headers })).json()) as {
    data: { id: string }[];
  };
  const own = page.data.map((g) => g.id);
  const sample = (ids: string[], n: number) =>
    Array.from({ length: n }, () => ids[Math.floor(Math.random() * ids.length)] as string);
  const unknown = () => randomUUID();

  /** Milliseconds of one request, its body read; the status must be the one expected. */
  const time = async (path: string, status: number): Promise<number> => {
    const t0 = performance.now();
    const res = await fetch(`${base}${path}`, { headers });
    await res.arrayBuffer();
    const ms = performance.now() - t0;
    if (res.status !== status) throw new Error(`${path}: ${res.status}, expected ${status}`);
    return ms;
  };

  type Case = { name: string; path: () => string; status: number; times: number[] };
  const cases: Case[] = [
    {
      name: "GET /games/{id}: another user's",
      path: () => `/games/${sample(foreign, 1)[0]}`,
      status: 404,
      times: [],
    },
    { name: 'GET /games/{id}: unknown', path: () => `/games/${unknown()}`, status: 404, times: [] },
    { name: 'GET /games/{id}: own', path: () => `/games/${sample(own, 1)[0]}`, status: 200, times: [] },
    {
      name: `ids= ${BULK} of another user's`,
      path: () => `/games?ids=${sample(foreign, BULK).join(',')}`,
      status: 200,
      times: [],
    },
    {
      name: `ids= ${BULK} unknown`,
      path: () => `/games?ids=${Array.from({ length: BULK }, unknown).join(',')}`,
      status: 200,
      times: [],
    },
  ];
  // Warm-up, then every round asks each case once, in a random order.
  for (const c of cases) for (let i = 0; i < 50; i++) await time(c.path(), c.status);
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...cases].sort(() => Math.random() - 0.5);
    for (const c of order) c.times.push(await time(c.path(), c.status));
  }

  console.log(
    `\nexistence timing: ${GAMES} games for each of two users, ${ROUNDS} rounds, one client, SQLite\n`,
  );
  console.log(
    `${'case'.padEnd(34)} ${'p50 ms'.padStart(8)} ${'p90 ms'.padStart(8)} ${'p50 ratio'.padStart(10)}`,
  );
  const p50 = (c: Case) =>
    percentile(
      [...c.times].sort((a, b) => a - b),
      50,
    );
  const p90 = (c: Case) =>
    percentile(
      [...c.times].sort((a, b) => a - b),
      90,
    );
  const reference = (name: string) => cases.find((c) => c.name === name) as Case;
  for (const c of cases) {
    const against = c.name.startsWith('ids=')
      ? reference(`ids= ${BULK} unknown`)
      : reference('GET /games/{id}: unknown');
    console.log(
      `${c.name.padEnd(34)} ${p50(c).toFixed(3).padStart(8)} ${p90(c).toFixed(3).padStart(8)} ${(p50(c) / p50(against)).toFixed(2).padStart(10)}`,
    );
  }
  const one = p50(cases[0] as Case) / p50(cases[1] as Case);
  const bulk = p50(cases[3] as Case) / p50(cases[4] as Case);
  const met = Math.abs(one - 1) <= 0.1 && Math.abs(bulk - 1) <= 0.1;
  console.log(`\ntarget: another user's ids within 10% of unknown ids at p50: ${met ? 'met' : 'NOT met'}`);
} finally {
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
