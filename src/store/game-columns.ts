// The columns of a games row that the game's content decides (an import writes them, an update replaces
// them), and their values for a game: one list for every write path, so they cannot drift apart.
import type { Selectable } from 'kysely';
import { type GamesTable, playerColumns } from './schema.ts';
import { gameSlug } from './slug.ts';
import type { GameRecord } from './types.ts';

/** The columns a game's content decides, what an import writes and an update replaces, in pushContentValues' order. */
export const CONTENT_COLUMNS = [
  'slug',
  'event',
  'date',
  'result',
  'eco',
  ...playerColumns,
  'metadata',
  'moves',
  'fen',
  'pgn',
  'content_hash',
] as const;
export type ContentColumns = Pick<Selectable<GamesTable>, (typeof CONTENT_COLUMNS)[number]>;

/** The values of CONTENT_COLUMNS for a game with this id, in that order. */
export function pushContentValues(out: unknown[], game: GameRecord, id: string): void {
  const { white: w, black: b } = game;
  out.push(
    gameSlug(w.name, b.name, game.year, id),
    game.event,
    game.date,
    game.result,
    game.eco,
    w.name,
    w.elo,
    w.fideId,
    w.country,
    b.name,
    b.elo,
    b.fideId,
    b.country,
    JSON.stringify(game.metadata),
    game.moves,
    game.fen,
    game.pgn,
    game.contentHash,
  );
}

/** The content columns of a game with this id, as an object (updates and the PostgreSQL insert). */
export function contentColumns(game: GameRecord, id: string): ContentColumns {
  const values: unknown[] = [];
  pushContentValues(values, game, id);
  // The names and values line up by construction (pushContentValues writes CONTENT_COLUMNS' order).
  return Object.fromEntries(CONTENT_COLUMNS.map((c, i) => [c, values[i]])) as unknown as ContentColumns;
}

/**
 * What a deleted game keeps is its feed item: id, database, players, result (and the list fields).
 * Its moves and PGN are dropped: deleted content is not kept.
 */
export const TOMBSTONE = { deleted: 1, pgn: '', moves: '', fen: '', metadata: '{}' } as const;
