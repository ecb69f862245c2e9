// Small generated PGN files for the feed suites: each game is valid and made unique by its tags.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../../src/store/index.ts';
import { cli, cliJson, type Env } from './harness.ts';
import { seed } from './in-process.ts';

/** The feed's answer shapes, as the tests read them. */
export interface Player {
  name: string | null;
  elo: number | null;
  fideId: string | null;
  country: string | null;
}
export interface Change {
  id: string;
  databaseId: string;
  updatedAt: string;
  deleted: boolean;
  white: Player;
  black: Player;
  result: string;
}
export interface FeedPage {
  data: Change[];
  nextCursor: string;
  hasMore: boolean;
}

export interface FixtureGame {
  white: string;
  black: string;
  result?: '1-0' | '0-1' | '1/2-1/2' | '*';
  event?: string;
}

const MOVES = '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6';

export function pgnText(games: FixtureGame[]): string {
  return games
    .map((g) => {
      const result = g.result ?? '*';
      return [
        `[Event "${g.event ?? 'Feed fixture'}"]`,
        '[Site "?"]',
        '[Date "2025.01.02"]',
        '[Round "?"]',
        `[White "${g.white}"]`,
        `[Black "${g.black}"]`,
        `[Result "${result}"]`,
        '',
        `${MOVES} ${result}`,
        '',
      ].join('\n');
    })
    .join('\n');
}

/** Writes the games to dir/name and returns the path. */
export function writePgn(dir: string, name: string, games: FixtureGame[]): string {
  const path = join(dir, name);
  writeFileSync(path, pgnText(games));
  return path;
}

/** Imports n numbered games (numberedGames) for the user into the database, made when missing. */
export async function importNumbered(env: Env, user: string, prefix: string, n: number, database = 'Games') {
  const file = writePgn(env.dir, `${prefix}.pgn`, numberedGames(prefix, n));
  await cliJson(env, ['import', file, '--user', user, '--database', database]);
}

/** importNumbered in the test's process: the games written through `store` (in-process.ts's seed). */
export async function seedNumbered(
  store: Store,
  dir: string,
  user: string,
  prefix: string,
  n: number,
  database = 'Games',
) {
  const file = writePgn(dir, `${prefix}.pgn`, numberedGames(prefix, n));
  return seed(store).importPgn(file, user, database);
}

/** n games whose players are named after a prefix and a number. */
export function numberedGames(prefix: string, n: number, event?: string): FixtureGame[] {
  return Array.from({ length: n }, (_, i) => ({
    white: `${prefix} White ${i + 1}`,
    black: `${prefix} Black ${i + 1}`,
    result: (['1-0', '0-1', '1/2-1/2'] as const)[i % 3],
    ...(event && { event }),
  }));
}

/**
 * The commands of four writer processes for one run of the feed-concurrency tests, each list run in order
 * by one writer, the four at once: imports, updates, moves and deletes (a database delete too) of seed games.
 */
export function writerScripts(
  dir: string,
  run: number,
  seed: string[],
  dbs: { a: string; b: string; c: string },
): string[][][] {
  const file = (name: string, games: ReturnType<typeof numberedGames>) =>
    writePgn(dir, `r${run}-${name}.pgn`, games);
  const s = (i: number) => seed[i] as string;
  const update = (i: number) => [
    'games',
    'update',
    s(i),
    file(`update-${i}`, [{ white: `Updated ${run}.${i}`, black: `Opponent ${run}.${i}`, result: '0-1' }]),
  ];
  const move = (i: number, to: string) => ['games', 'move', s(i), '--database', to];
  const del = (i: number) => ['games', 'delete', s(i)];
  const imp = (name: string, db: string, n: number) => [
    'import',
    file(name, numberedGames(`Run ${run} ${name}`, n)),
    '--user',
    'alice',
    '--database',
    db,
  ];
  return [
    [imp('i1', dbs.a, 3), imp('i2', dbs.b, 4), imp('i3', dbs.c, 2)],
    [update(0), update(8), update(1), update(9)],
    [move(4, dbs.b), move(9, dbs.c), move(5, dbs.c), move(4, dbs.c)],
    [del(10), del(8), ['databases', 'delete', dbs.c, '--user', 'alice'], del(9)],
  ];
}

/** Games in the seed database of each run of the race tests. */
export const SEED_GAMES = 12;
// Writers race on purpose: a game may be deleted before another writer updates or moves it, and a database
// deleted before a game is moved or imported into it. Those commands fail cleanly; nothing else may fail.
const EXPECTED_FAILURE = /no game|no database|was deleted while the import ran/;

/** One run's databases for alice: A holds SEED_GAMES imported games, B and C start empty. */
export async function seedRun(
  env: Env,
  run: number,
): Promise<{ a: { id: string; slug: string }; b: { slug: string }; c: { slug: string } }> {
  const seedFile = writePgn(env.dir, `r${run}-seed.pgn`, numberedGames(`Seed ${run}`, SEED_GAMES));
  const [seeded, b, c] = await Promise.all([
    cliJson<{ database: { id: string; slug: string } }>(env, [
      'import',
      seedFile,
      '--user',
      'alice',
      '--database',
      `A${run}`,
    ]),
    cliJson<{ slug: string }>(env, ['databases', 'add', `B${run}`, '--user', 'alice']),
    cliJson<{ slug: string }>(env, ['databases', 'add', `C${run}`, '--user', 'alice']),
  ]);
  return { a: seeded.database, b, c };
}

/** Runs one writer's commands in order; counts those that succeeded and those refused as a race allows. */
export async function runWriter(env: Env, commands: string[][]): Promise<{ ok: number; refused: number }> {
  const tally = { ok: 0, refused: 0 };
  for (const args of commands) {
    const result = await cli(env, args);
    if (result.code === 0) {
      tally.ok++;
      continue;
    }
    assert.match(result.stderr, EXPECTED_FAILURE, `chessport ${args.join(' ')} failed unexpectedly`);
    tally.refused++;
  }
  return tally;
}

/** What a feed follower and /games must agree on for one game. */
export const essentials = (g: Change) => ({
  id: g.id,
  databaseId: g.databaseId,
  result: g.result,
  white: g.white.name,
  black: g.black.name,
});
export const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
