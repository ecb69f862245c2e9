// The API's answer shapes as a client sees them on the wire (timestamps are ISO strings). Plain types only:
// the client shares the contract with the server, never its code. test/client/boundary.test.ts checks that
// these keys match what the server's serialisers produce.
import type { ErrorCode } from './error-codes.ts';

/** Every error code of the API (docs/design.md 17), from the client's list of them (error-codes.ts). */
export type { ErrorCode };

/** The body of every answer that is not a success. */
export interface ErrorBody {
  /** Match on this code. */
  error: ErrorCode;
  /** For developers; its wording may change. */
  error_description: string;
}

/** The scopes a token may carry: /me needs user.read, /databases databases.read, the rest games.read. */
export type Scope = 'user.read' | 'databases.read' | 'games.read';

/** A result in PGN notation; `*` while unknown. */
export type GameResult = '1-0' | '0-1' | '1/2-1/2' | '*';

/** An unknown value is null, never omitted (docs/design.md 1). */
export interface Player {
  /** The White/Black tag. */
  name: string | null;
  /** The WhiteElo/BlackElo tag; null for 0 or no number. */
  elo: number | null;
  /** Digits of the WhiteFideId/BlackFideId tag. */
  fideId: string | null;
  /** Three upper-case letters. */
  country: string | null;
}

/** The user behind the token (GET /me). */
export interface User {
  /** Pairwise id: stable for one app, different for every app. */
  id: string;
  /** Display name. */
  name: string | null;
  email: string | null;
  /** URL of the user's image. */
  image: string | null;
}

/** A collection of the user's games. */
export interface Database {
  /** UUID. */
  id: string;
  /** As the user named it. */
  name: string;
  /** Usable in place of the id; unique among the user's databases. */
  slug: string;
  private: boolean;
  /** The most games it takes; null when unlimited. */
  maxGames: number | null;
  /** Its live games: the total its game list gives. */
  gameCount: number;
  /** ISO 8601, UTC, milliseconds. */
  createdAt: string;
  /** The last change to the database or its games; ISO 8601, UTC, milliseconds. */
  updatedAt: string;
}

/** A game list item: no moves and no PGN. */
export interface GameSummary {
  /** UUID (version 7); treat it as opaque. */
  id: string;
  /** `<white>-vs-<black>-<year>-<12 hex of the id>`, readable and unique. */
  slug: string;
  /** The UUID of the database holding the game. */
  databaseId: string;
  /** The Event tag. */
  event: string | null;
  /** YYYY-MM-DD, or null when the PGN date is incomplete. */
  date: string | null;
  result: GameResult;
  /** ECO opening code, A00 to E99. */
  eco: string | null;
  white: Player;
  black: Player;
}

/** One game with every list-item field and enough to mirror it (GET /games/{id}). */
export interface GameDetail extends GameSummary {
  /** Position after the last move of the main line. */
  fen: string;
  /** Main line in UCI notation, separated by single spaces; empty without moves. */
  moves: string;
  /** The game in PGN export format. */
  pgn: string;
  /** Tag pairs without a field of their own. */
  metadata: Record<string, string>;
  /** The last change to the game; ISO 8601, UTC, milliseconds. */
  updatedAt: string;
}

/**
 * One changed game in its latest state. Its detail comes with the item when the feed is asked with
 * `expand: 'game'` (ExpandedChange); otherwise fetch the detail of one that is not deleted with game(id).
 */
export interface Change {
  /** The game's UUID. */
  id: string;
  /** The database holding the game (after a move, the new one). */
  databaseId: string;
  /** The last change to the game; ISO 8601, UTC, milliseconds. */
  updatedAt: string;
  /** A tombstone: the game was deleted. */
  deleted: boolean;
  white: Player;
  black: Player;
  result: GameResult;
}

/** A feed item of `feed({ expand: 'game' })`: the change and its game, from the same snapshot. */
export interface ExpandedChange extends Change {
  /** The game as game(id) gives it; null for a deleted game (a tombstone). */
  game: GameDetail | null;
}

/** One page of the changes feed; its items are ExpandedChange with `expand: 'game'`. */
export interface ChangesPage<Item extends Change = Change> {
  /** Changed games in change order, each once. */
  data: Item[];
  /** Opaque; also on an empty page, where it is the position that was sent. */
  nextCursor: string;
  /** More changes exist now after nextCursor: fetch the next page. */
  hasMore: boolean;
}

/** One page of a game list; `next` is the target of the Link rel="next" header, absolute. */
export interface ListPage<T> {
  /** The page's items, in list order (import order, oldest first). */
  data: T[];
  next: string | null;
}
