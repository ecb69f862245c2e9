// What the store hands out: plain domain records, independent of the dialect's row shapes.

export interface User {
  id: string;
  login: string;
  name: string | null;
  email: string | null;
  image: string | null;
  createdAt: number;
}

export interface App {
  id: string;
  name: string;
  sector: string;
  createdAt: number;
}

export interface TokenInfo {
  id: string;
  userId: string;
  userLogin: string;
  appId: string;
  appName: string;
  appSector: string;
  scopes: string[];
  expiresAt: number | null;
  revokedAt: number | null;
  createdAt: number;
}

export interface Database {
  id: string;
  ownerId: string;
  name: string;
  slug: string;
  private: boolean;
  maxGames: number | null;
  /** Its live games, when it was read. */
  gameCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface Player {
  name: string | null;
  elo: number | null;
  fideId: string | null;
  country: string | null;
}

/** The fields of a game that the store keeps, as the import layer derives them from the PGN. */
export interface GameRecord {
  event: string | null;
  date: string | null;
  /** The year of the Date tag, also of a partial date ("1858.??.??"), where date is null: for the slug. */
  year: string | null;
  result: string;
  eco: string | null;
  white: Player;
  black: Player;
  metadata: Record<string, string>;
  moves: string;
  fen: string;
  pgn: string;
  contentHash: string;
}

export interface GameSummary {
  id: string;
  slug: string;
  databaseId: string;
  event: string | null;
  date: string | null;
  result: string;
  eco: string | null;
  white: Player;
  black: Player;
}

/** A game of a list with its position in import order: a page that starts after it can seek there (Page.after). */
export interface ListedGame extends GameSummary {
  position: number;
}

export interface GameDetail extends GameSummary {
  fen: string;
  moves: string;
  pgn: string;
  metadata: Record<string, string>;
  updatedAt: number;
}

export interface GameChange {
  seq: number;
  id: string;
  databaseId: string;
  updatedAt: number;
  deleted: boolean;
  white: Player;
  black: Player;
  result: string;
}

/** A feed item with its game's detail: null for a deleted game (GET /changes?expand=game). */
export interface ExpandedChange extends GameChange {
  game: GameDetail | null;
}

export interface Page {
  limit: number;
  offset: number;
  /** Only the games after this list position (ListedGame.position); `offset` counts from there. */
  after?: number;
}

/** A long run of writes (an import): see Store.bulkWrites. */
export interface BulkWrites {
  /** Call before each write transaction of the run: it may have to wait. */
  ready(): Promise<void>;
  /** Call after each write transaction of the run. */
  committed(): void;
  /** Call once when the run ends, also after a failure. */
  end(): Promise<void>;
}

export interface InsertOutcome {
  inserted: number;
  duplicates: number;
  /** Games not added because the database reached its maxGames. */
  overLimit: number;
  ids: string[];
}

/** The SQL dialect of a store: a SQLite file, or a PostgreSQL database. */
export type Dialect = 'sqlite' | 'postgres';
