// Domain records to the API's JSON shapes (spec "Resources and their fields", docs/design.md 1-11).
import type { Database, ExpandedChange, GameChange, GameDetail, GameSummary } from '../store/index.ts';

export const iso = (ms: number): string => new Date(ms).toISOString();

export function databaseJson(db: Database) {
  return {
    id: db.id,
    name: db.name,
    slug: db.slug,
    private: db.private,
    maxGames: db.maxGames,
    createdAt: iso(db.createdAt),
    updatedAt: iso(db.updatedAt),
  };
}

/** A database as /databases lists it: with the number of its live games. */
export function listedDatabaseJson(db: Database) {
  return { ...databaseJson(db), gameCount: db.gameCount };
}

export function gameSummaryJson(game: GameSummary) {
  return {
    id: game.id,
    slug: game.slug,
    databaseId: game.databaseId,
    event: game.event,
    date: game.date,
    result: game.result,
    eco: game.eco,
    white: game.white,
    black: game.black,
  };
}

/** `updatedAt`: the game's time as written already (a feed item's, of the same row). */
export function gameDetailJson(game: GameDetail, updatedAt = iso(game.updatedAt)) {
  return {
    ...gameSummaryJson(game),
    fen: game.fen,
    moves: game.moves,
    pgn: game.pgn,
    metadata: game.metadata,
    updatedAt,
  };
}

/** One entry of the changes feed; the CLI prints a game it changed in the same shape. */
export function changeJson(change: GameChange) {
  return {
    id: change.id,
    databaseId: change.databaseId,
    updatedAt: iso(change.updatedAt),
    deleted: change.deleted,
    white: change.white,
    black: change.black,
    result: change.result,
  };
}

/** A feed item of GET /changes?expand=game: the item and its game as GET /games/{id} gives it, or null. */
export function expandedChangeJson(change: ExpandedChange) {
  const item = changeJson(change);
  return { ...item, game: change.game && gameDetailJson(change.game, item.updatedAt) };
}
