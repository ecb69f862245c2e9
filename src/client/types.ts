// The API's answer shapes as a client sees them on the wire (timestamps are ISO strings). Plain types only:
// the client shares the contract with the server, never its code. test/client/boundary.test.ts checks that
// these keys match what the server's serialisers produce.

/** Every error code of the API (DESIGN.md 17). */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'server_error'
  | 'unavailable';

export interface ErrorBody {
  error: ErrorCode;
  error_description: string;
}

export type Scope = 'user.read' | 'databases.read' | 'games.read';

export type GameResult = '1-0' | '0-1' | '1/2-1/2' | '*';

/** An unknown value is null, never omitted (DESIGN.md 1). */
export interface Player {
  name: string | null;
  elo: number | null;
  /** Digits of the WhiteFideId/BlackFideId tag. */
  fideId: string | null;
  /** Three upper-case letters. */
  country: string | null;
}

export interface User {
  /** Pairwise id: stable for one app, different for every app. */
  id: string;
  name: string | null;
  email: string | null;
  image: string | null;
}

export interface Database {
  id: string;
  name: string;
  slug: string;
  private: boolean;
  maxGames: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface GameSummary {
  id: string;
  slug: string;
  databaseId: string;
  event: string | null;
  /** YYYY-MM-DD, or null when the PGN date is incomplete. */
  date: string | null;
  result: GameResult;
  eco: string | null;
  white: Player;
  black: Player;
}

export interface GameDetail extends GameSummary {
  /** Position after the last move of the main line. */
  fen: string;
  /** Main line in UCI notation, separated by single spaces; empty without moves. */
  moves: string;
  /** The game in PGN export format. */
  pgn: string;
  /** Tag pairs without a field of their own. */
  metadata: Record<string, string>;
  updatedAt: string;
}

export interface Change {
  id: string;
  databaseId: string;
  updatedAt: string;
  /** A tombstone: the game was deleted. */
  deleted: boolean;
  white: Player;
  black: Player;
  result: GameResult;
}

export interface ChangesPage {
  data: Change[];
  /** Opaque; also on an empty page, where it is the position that was sent. */
  nextCursor: string;
  hasMore: boolean;
}

/** One page of a game list; `next` is the target of the Link rel="next" header, absolute. */
export interface ListPage<T> {
  data: T[];
  next: string | null;
}
