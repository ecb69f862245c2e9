// Small generated PGN files for the feed suites: each game is valid and made unique by its tags.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
