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
