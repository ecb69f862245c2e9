// Domain records to the API's JSON shapes (spec "Resources and their fields", docs/design.md 1-11).
import type {
  Database,
  ExpandedChange,
  GameChange,
  GameDetail,
  GameDetailText,
  GameSummary,
  Player,
} from '../store/index.ts';

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

const text = JSON.stringify;

function playerLine(p: Player): string {
  return `{"name":${text(p.name)},"elo":${text(p.elo)},"fideId":${text(p.fideId)},"country":${text(p.country)}}`;
}

/**
 * A game's detail as one NDJSON line: `JSON.stringify(gameDetailJson(game))` and a newline, byte for byte
 * (test/api/exports.test.ts), written field by field with the stored metadata text spliced in as it is. The
 * store writes that text with JSON.stringify, so it is what parsing and writing it again would give; the
 * export skips that work for every game it sends (docs/performance.md).
 */
export function gameDetailLine(game: GameDetailText): string {
  return (
    `{"id":${text(game.id)},"slug":${text(game.slug)},"databaseId":${text(game.databaseId)},` +
    `"event":${text(game.event)},"date":${text(game.date)},"result":${text(game.result)},` +
    `"eco":${text(game.eco)},"white":${playerLine(game.white)},"black":${playerLine(game.black)},` +
    `"fen":${text(game.fen)},"moves":${text(game.moves)},"pgn":${text(game.pgn)},` +
    `"metadata":${game.metadataJson},"updatedAt":"${iso(game.updatedAt)}"}\n`
  );
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
