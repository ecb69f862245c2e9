// Reads from a replica (docs/operations.md, "Replicas"): on a cluster of the bench's own (a primary and one
// streaming replica, test/helpers/pg-cluster.ts), one instance reading the primary alone and one reading the
// replica, in the same run. For each: the share of the store's queries that reach the primary at one request
// mix (lists, details, the feed, /databases), from the instance's chessport_store_reads_total and from
// PostgreSQL's own count of transactions (pg_stat_database), and GET /games requests/s.
// Usage: node bench/replicas.ts [--games N] [--seconds S]   (defaults: 20000 games, 6 s per case)
//
// Primary, replica, both instances and autocannon share one machine: the requests/s compare the two paths'
// overhead, not what a replica on its own hardware adds.
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { PG_CLUSTER_SKIP, type PgCluster, pgCluster } from '../test/helpers/pg-cluster.ts';
import { fillBenchStore, loadSpread, printRows, type Row, startChessport, stop } from './support.ts';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const GAMES = arg('--games', 20_000);
const SECONDS = arg('--seconds', 6);

if (PG_CLUSTER_SKIP) {
  console.log(`bench/replicas.ts skipped: ${PG_CLUSTER_SKIP}`);
  process.exit(0);
}

/** A counter of an instance's /metrics by its labels (0 when absent). */
async function metric(origin: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Transactions committed in the database on one node, as PostgreSQL counts them (every query is one). */
async function transactions(url: string, database: string): Promise<number> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'select xact_commit + xact_rollback as n from pg_stat_database where datname = $1',
      [database],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** Waits until url answers 200: two servers starting on a busy machine may take a minute. */
async function upWithin(url: string, headers: Record<string, string>, ms = 180_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await fetch(url, { headers }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > until) throw new Error(`${url} did not answer in ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let cluster: PgCluster | undefined;
const servers: ChildProcess[] = [];
try {
  cluster = await pgCluster([{}]);
  const replica = cluster.replicas[0];
  if (!replica) throw new Error('no replica');
  const database = await cluster.createDatabase();
  const primaryUrl = cluster.primary.url(database);
  const { token } = await fillBenchStore(primaryUrl, GAMES, 500);
  await cluster.caughtUp(replica);

  const env = {
    DATABASE_URL: primaryUrl,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '1000000000',
    PAGE_CACHE_MB: '0',
  };
  const alone = await startChessport(env);
  const withReplica = await startChessport({ ...env, DATABASE_REPLICA_URLS: replica.url(database) });
  servers.push(alone.child, withReplica.child);
  const headers = { authorization: `Bearer ${token}` };
  await upWithin(`${alone.origin}/api/v1/games?limit=1`, headers);
  await upWithin(`${withReplica.origin}/api/v1/games?limit=1`, headers);
  const first = (await (await fetch(`${alone.origin}/api/v1/games?limit=50`, { headers })).json()) as {
    data: { id: string }[];
  };
  const cursor = (
    (await (await fetch(`${alone.origin}/api/v1/changes?limit=100`, { headers })).json()) as {
      nextCursor: string;
    }
  ).nextCursor;
  // The mix: a page of the list, a game, a feed page after a cursor, the databases.
  const mix = [
    ...[0, 500, 1000, 5000].map((offset) => `/api/v1/games?limit=50&offset=${offset}`),
    ...first.data.slice(0, 8).map((game) => `/api/v1/games/${game.id}?minCursor=${cursor}`),
    `/api/v1/changes?limit=100&cursor=${cursor}`,
    '/api/v1/changes?limit=100',
    '/api/v1/databases',
  ].map((path) => ({ path }));

  const share: string[] = [];
  const rows: Row[] = [];
  for (const [name, instance] of [
    ['primary alone', alone],
    ['with a replica', withReplica],
  ] as const) {
    const readsBefore = {
      primary: await metric(instance.origin, 'chessport_store_reads_total', 'target="primary"'),
      replica: await metric(instance.origin, 'chessport_store_reads_total', 'target="replica"'),
    };
    const xactBefore = {
      primary: await transactions(cluster.primary.url(), database),
      replica: await transactions(replica.url(), database),
    };
    rows.push(
      await loadSpread(
        `mix (${mix.length} requests), ${name}`,
        [{ url: instance.origin, headers, requests: mix }],
        SECONDS,
      ),
    );
    const reads = {
      primary:
        (await metric(instance.origin, 'chessport_store_reads_total', 'target="primary"')) -
        readsBefore.primary,
      replica:
        (await metric(instance.origin, 'chessport_store_reads_total', 'target="replica"')) -
        readsBefore.replica,
    };
    // PostgreSQL's statistics reach pg_stat_database within about 10 s of a backend going idle.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const xact = {
      primary: (await transactions(cluster.primary.url(), database)) - xactBefore.primary,
      replica: (await transactions(replica.url(), database)) - xactBefore.replica,
    };
    const pct = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole)).toFixed(1)} %`;
    share.push(
      `${name.padEnd(16)} store reads on the primary: ${pct(reads.primary, reads.primary + reads.replica)} ` +
        `(${reads.primary} of ${reads.primary + reads.replica}); PostgreSQL transactions on the primary: ` +
        `${pct(xact.primary, xact.primary + xact.replica)} (${xact.primary} of ${xact.primary + xact.replica})`,
    );
  }
  for (const [name, instance] of [
    ['GET /games?limit=50, primary path', alone],
    ['GET /games?limit=50, replica path', withReplica],
  ] as const) {
    rows.push(
      await loadSpread(
        name,
        [
          {
            url: instance.origin,
            headers,
            requests: [0, 50, 100, 150].map((offset) => ({
              path: `/api/v1/games?limit=50&offset=${offset}`,
            })),
          },
        ],
        SECONDS,
      ),
    );
  }
  console.log(
    `\nReads from a replica: ${GAMES} games, page cache off, 10 connections, ${SECONDS} s per case\n`,
  );
  printRows(rows, 48);
  console.log('');
  for (const line of share) console.log(line);
} finally {
  for (const child of servers) await stop(child);
  cluster?.cleanup();
}
