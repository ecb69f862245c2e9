// The filters of GET /games (issue 36) against the unfiltered list, same run, same store: p50 and p99 of one
// page (limit=50, offsets spread over the first pages) with the page cache off, so that every request reads
// the store. The store: one user's N games (TWIC 920's games repeated, so that players, events and openings
// recur as in a real archive), on PostgreSQL by default. Target (issue 36): p50 within 2x of the unfiltered
// list at 1,000,000 games on PostgreSQL.
// The fill: on PostgreSQL the 2,000 distinct games go through the store's import batches and the rest are
// copies of them made in SQL (support.ts, copyPostgresGames), a few minutes for a million where importing
// them would take hours; SQLite imports every game through the store.
// Usage: node bench/filters.ts [--games N] [--stores postgres,sqlite] [--requests R]
//   defaults: 1000000 games, postgres, 200 requests a case. Skips PostgreSQL, saying so, when it does not answer.
import { parseArgs } from 'node:util';
import {
  type Dialect,
  fillBenchStore,
  forEachStore,
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
  },
});
const GAMES = Number(values.games);
const REQUESTS = Number(values.requests);

interface Game {
  white: { name: string | null; fideId: string | null };
  event: string | null;
  eco: string | null;
  date: string | null;
}

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; total: number }> {
  const started = performance.now();
  const answer = await fetch(url, { headers });
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
  return { ms: performance.now() - started, total: Number(answer.headers.get('x-total-count')) };
}

async function bench(dialect: Dialect): Promise<void> {
  await withScratchStore(dialect, `chessport_bench_filters_${GAMES}`, async (databaseUrl) => {
    const fill = await fillBenchStore(databaseUrl, GAMES, 2000, { copy: true });
    console.log(
      `\n${dialect}: ${GAMES.toLocaleString('en')} games (${fill.distinct} distinct, repeated) filled in ` +
        `${fill.seconds.toFixed(0)} s`,
    );
    const { child, origin } = await startChessport({
      DATABASE_URL: databaseUrl,
      PAGE_CACHE_MB: '0',
      RATE_LIMIT_MAX: '1000000',
      LOG_LEVEL: 'warn',
    });
    try {
      const headers = { authorization: `Bearer ${fill.token}` };
      const base = `${origin}/api/v1/games`;
      // A loaded machine may take longer to start the server than waitUntilUp allows once.
      for (let tries = 0; ; tries++) {
        try {
          await waitUntilUp(`${base}?limit=1`, headers);
          break;
        } catch (error) {
          if (tries >= 5) throw error;
        }
      }
      const sample = (await (await fetch(`${base}?limit=200&offset=1000`, { headers })).json()) as {
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
          'updatedSince (recent)',
          `updatedSince=${encodeURIComponent(new Date(fill.changedUntil - 60_000).toISOString())}`,
        ],
      ];
      console.log(`| case | matches | p50 ms | p99 ms | p50 x no filter |`);
      console.log(`|---|---:|---:|---:|---:|`);
      let reference = Number.NaN;
      for (const [name, query] of cases) {
        const times: number[] = [];
        let total = 0;
        for (let i = 0; i < REQUESTS; i++) {
          const offset = (i % 10) * 50;
          const run = await timed(`${base}?limit=50&offset=${offset}${query ? `&${query}` : ''}`, headers);
          times.push(run.ms);
          total = run.total;
        }
        times.sort((a, b) => a - b);
        const p50 = percentile(times, 50);
        if (Number.isNaN(reference)) reference = p50;
        console.log(
          `| ${name} | ${total.toLocaleString('en')} | ${p50.toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ` +
            `${(p50 / reference).toFixed(2)} |`,
        );
      }
    } finally {
      await stop(child);
    }
  });
}

await forEachStore(values.stores, bench);
