// The filters of GET /games (issue 36) against the unfiltered list, same run, same store: p50 and p99 of one
// page (limit=50, offsets spread over the first pages) with the page cache off, so that every request reads
// the store; each case on a server that counts every match for a filter's total (FILTER_TOTAL_MAX=0, as
// before the bound) and on one with the default bound (10,000), one after the other. The store: one user's N games (TWIC 920's games repeated, so that players, events and openings
// recur as in a real archive), on PostgreSQL by default. Target (issue 36): p50 within 2x of the unfiltered
// list at 1,000,000 games on PostgreSQL.
// The fill: on PostgreSQL the 2,000 distinct games go through the store's import batches and the rest are
// copies of them made in SQL (support.ts, copyPostgresGames), a few minutes for a million where importing
// them would take hours; SQLite imports every game through the store.
// With --keep (PostgreSQL only), the filled store is kept as the database chessport_bench_filters_keep_N and
// reused by the next run with --keep (its token and fill time in the database's comment), so that
// experiments skip the fill; without --keep the store is made and dropped as before. Drop a kept store with
// `psql -c 'drop database chessport_bench_filters_keep_1000000'` (the server migrates it when it starts).
// Usage: node bench/filters.ts [--games N] [--stores postgres,sqlite] [--requests R] [--bounds 0,default,1000]
//   [--keep] [--cases name,name]
//   defaults: 1000000 games, postgres, 200 requests a case, bounds 0 and the default, every case. Skips
//   PostgreSQL, saying so, when it does not answer.
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  adminQuery,
  type Dialect,
  fillBenchStore,
  forEachStore,
  POSTGRES_URL,
  percentile,
  startChessport,
  stop,
  waitUntilUp,
  withScratchStore,
} from './support.ts';

const { values } = parseArgs({
  options: {
    games: { type: 'string', default: '1000000' },
    stores: { type: 'string', default: 'postgres' },
    requests: { type: 'string', default: '200' },
    bounds: { type: 'string', default: '0,default' },
    keep: { type: 'boolean', default: false },
    cases: { type: 'string', default: '' },
  },
});
/** The cases to run (by name, the unfiltered one always), all when empty. */
const ONLY = values.cases.split(',').filter(Boolean);
const GAMES = Number(values.games);
const REQUESTS = Number(values.requests);
/** The FILTER_TOTAL_MAX of each server: 0 counts every match (as before the bound), `default` the default. */
const BOUNDS = values.bounds.split(',');

interface Game {
  white: { name: string | null; fideId: string | null };
  event: string | null;
  eco: string | null;
  date: string | null;
}

/** One request's time, and the list's total as it says it (`> N` when it exceeds the server's bound). */
async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; total: string }> {
  const started = performance.now();
  const answer = await fetch(url, { headers });
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
  const count = answer.headers.get('x-total-count');
  const exceeds = answer.headers.get('x-total-count-exceeds');
  return {
    ms: performance.now() - started,
    total: count !== null ? Number(count).toLocaleString('en') : `> ${Number(exceeds).toLocaleString('en')}`,
  };
}

type Fill = { token: string; distinct: number; seconds: number; changedUntil: number };

/**
 * Runs `measure` on a PostgreSQL store of GAMES games kept between runs (--keep): filled and described (its
 * fill in the database's comment) on the first run, reused as it is on the next.
 */
async function withKeptStore(measure: (databaseUrl: string, fill: Fill) => Promise<void>): Promise<void> {
  const name = `chessport_bench_filters_keep_${GAMES}`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  let described: string | null | undefined;
  try {
    const found = await admin.query<{ comment: string | null }>(
      "select shobj_description(oid, 'pg_database') as comment from pg_database where datname = $1",
      [name],
    );
    described = found.rows[0]?.comment;
  } finally {
    await admin.end();
  }
  let fill: Fill;
  if (described) {
    fill = JSON.parse(described) as Fill;
    console.log(`\nreusing the kept store ${name}`);
  } else {
    // A database without the comment is a fill that did not finish: made again.
    if (described === null) await adminQuery(`drop database ${name} with (force)`);
    await adminQuery(`create database ${name}`);
    const made = await fillBenchStore(databaseUrl, GAMES, 2000, { copy: true });
    fill = {
      token: made.token,
      distinct: made.distinct,
      seconds: made.seconds,
      changedUntil: made.changedUntil,
    };
    await adminQuery(`comment on database ${name} is '${JSON.stringify(fill).replaceAll("'", "''")}'`);
  }
  await measure(databaseUrl, fill);
}

async function bench(dialect: Dialect): Promise<void> {
  const withStore = (measure: (databaseUrl: string, fill: Fill) => Promise<void>) =>
    values.keep && dialect === 'postgres'
      ? withKeptStore(measure)
      : withScratchStore(dialect, `chessport_bench_filters_${GAMES}`, async (databaseUrl) =>
          measure(databaseUrl, await fillBenchStore(databaseUrl, GAMES, 2000, { copy: true })),
        );
  await withStore(async (databaseUrl, fill) => {
    console.log(
      `\n${dialect}: ${GAMES.toLocaleString('en')} games (${fill.distinct} distinct, repeated) filled in ` +
        `${fill.seconds.toFixed(0)} s`,
    );
    // A server for each bound on the one store: by default one that counts every match of a filter for its
    // total (FILTER_TOTAL_MAX=0, as before the bound) and one with the default bound; each case on one after
    // the other, so that all meet the same moment of the machine's load.
    const servers = await Promise.all(
      BOUNDS.map((max) =>
        startChessport({
          DATABASE_URL: databaseUrl,
          PAGE_CACHE_MB: '0',
          RATE_LIMIT_MAX: '1000000',
          LOG_LEVEL: 'warn',
          ...(max === 'default' ? {} : { FILTER_TOTAL_MAX: max }),
        }),
      ),
    );
    try {
      const headers = { authorization: `Bearer ${fill.token}` };
      const bases = servers.map(({ origin }) => `${origin}/api/v1/games`);
      for (const base of bases) {
        // A loaded machine may take longer to start the server than waitUntilUp allows once.
        for (let tries = 0; ; tries++) {
          try {
            await waitUntilUp(`${base}?limit=1`, headers);
            break;
          } catch (error) {
            if (tries >= 5) throw error;
          }
        }
      }
      const sample = (await (await fetch(`${bases[0]}?limit=200&offset=1000`, { headers })).json()) as {
        data: Game[];
      };
      const pick = <T>(pickOf: (game: Game) => T | null) =>
        sample.data.map(pickOf).find((value) => value !== null && value !== undefined) as T;
      const cases: [string, string][] = [
        ['no filter', ''],
        ['player', `player=${encodeURIComponent(pick((g) => g.white.name))}`],
        ['player + color', `player=${encodeURIComponent(pick((g) => g.white.name))}&color=white`],
        ['event', `event=${encodeURIComponent(pick((g) => g.event))}`],
        ['eco prefix (B9)', 'eco=B9'],
        ['eco code', `eco=${pick((g) => g.eco)}`],
        ['result 1-0', 'result=1-0'],
        ['dateFrom (a year)', `dateFrom=${(pick((g) => g.date) ?? '2000-01-01').slice(0, 4)}-01-01`],
        [
          'updatedSince (last second)',
          `updatedSince=${encodeURIComponent(new Date(fill.changedUntil - 1_000).toISOString())}`,
        ],
        [
          'updatedSince (last minute)',
          `updatedSince=${encodeURIComponent(new Date(fill.changedUntil - 60_000).toISOString())}`,
        ],
      ];
      const name = (max: string) => (max === '0' ? 'every match counted' : `bound ${max}`);
      console.log(
        `| case | matches | ${BOUNDS.map((max) => `${name(max)}: p50 ms | p99 ms | p50 x no filter`).join(' | ')} |`,
      );
      console.log(`|---|---:|${BOUNDS.map(() => '---:|---:|---:|').join('')}`);
      const reference = BOUNDS.map(() => Number.NaN);
      for (const [name, query] of cases.filter(
        ([name], i) => i === 0 || ONLY.length === 0 || ONLY.includes(name),
      )) {
        const cells: string[] = [];
        let matches = '';
        for (const [i, base] of bases.entries()) {
          const times: number[] = [];
          for (let r = 0; r < REQUESTS; r++) {
            const offset = (r % 10) * 50;
            const run = await timed(`${base}?limit=50&offset=${offset}${query ? `&${query}` : ''}`, headers);
            times.push(run.ms);
            if (i === 0) matches = run.total;
            // A case slower than a second a request gets ten (one per page), not hours of them.
            if (
              times.length === 10 &&
              percentile(
                [...times].sort((a, b) => a - b),
                50,
              ) > 1000
            )
              break;
          }
          times.sort((a, b) => a - b);
          const p50 = percentile(times, 50);
          if (Number.isNaN(reference[i])) reference[i] = p50;
          cells.push(
            `${p50.toFixed(1)} | ${percentile(times, 99).toFixed(1)}${times.length < REQUESTS ? ` (${times.length} requests)` : ''} | ${(p50 / (reference[i] as number)).toFixed(2)}`,
          );
        }
        console.log(`| ${name} | ${matches} | ${cells.join(' | ')} |`);
      }
    } finally {
      for (const { child } of servers) await stop(child);
    }
  });
}

await forEachStore(values.stores, bench);
