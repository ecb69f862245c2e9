// Table types of the store, shared by both dialects. Times are integer milliseconds since the epoch (UTC).
import type { Generated, Selectable } from 'kysely';

export interface UsersTable {
  id: string;
  login: string;
  name: string | null;
  email: string | null;
  image: string | null;
  created_at: number;
}

export interface AppsTable {
  id: string;
  name: string;
  /** Pairwise-id sector: apps of one sector see the same user ids (OpenID Connect's sector identifier). */
  sector: string;
  created_at: number;
}

export interface TokensTable {
  id: string;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  hash: string;
  user_id: string;
  app_id: string;
  /** Space-separated scopes. */
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

export interface DatabasesTable {
  id: string;
  owner_id: string;
  name: string;
  slug: string;
  private: number;
  max_games: number | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /**
   * The seq of the latest write to the database's games (0: none since migration 0007): what the PGN
   * export's ETag is made of (etags.ts).
   */
  games_seq: Generated<number>;
  /** The number of its live games, kept by every write to its games (migration 0011). */
  game_count: Generated<number>;
}

export interface GamesTable {
  /** Internal insertion order: the stable order of every list. */
  pk: Generated<number>;
  id: string;
  owner_id: string;
  database_id: string;
  slug: string;
  /** Change sequence of the game's latest write (docs/design.md 18). */
  seq: number;
  event: string | null;
  date: string | null;
  result: string;
  eco: string | null;
  white_name: string | null;
  white_elo: number | null;
  white_fide_id: string | null;
  white_country: string | null;
  black_name: string | null;
  black_elo: number | null;
  black_fide_id: string | null;
  black_country: string | null;
  /** JSON object of the tags without a field of their own. */
  metadata: string;
  moves: string;
  fen: string;
  pgn: string;
  /** SHA-256 of the normalised game, for idempotent imports. */
  content_hash: string;
  created_at: number;
  updated_at: number;
  deleted: number;
  /**
   * PostgreSQL: the games_dedup_key index's key (dedupKey). SQLite keeps its keys in game_keys instead, and
   * leaves it empty since migration 0005.
   */
  dedup_key: string;
}

/** A games row as an import writes it (the pk comes from the table). */
export type GameInsertRow = Omit<Selectable<GamesTable>, 'pk'>;

/** SQLite only (migration 0005): the log of game keys an import checks for duplicates (sqlite/game-keys.ts). */
export interface GameKeysTable {
  id: Generated<number>;
  database_id: string;
  /** The games row of the first key; key i belongs to row first_pk + i. */
  first_pk: number;
  /** 6 bytes a game: the first 48 bits of its content hash. */
  keys: Buffer;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface SequencesTable {
  name: string;
  value: number;
}

/** PostgreSQL only (migration 0002): each user's change time, and the row that serialises their writers. */
export interface FeedHeadsTable {
  user_id: string;
  change_time: number;
}

export interface DB {
  users: UsersTable;
  apps: AppsTable;
  tokens: TokensTable;
  databases: DatabasesTable;
  games: GamesTable;
  settings: SettingsTable;
  sequences: SequencesTable;
  feed_heads: FeedHeadsTable;
  game_keys: GameKeysTable;
}

/** The columns behind the two player references of every game answer. */
export const playerColumns = [
  'white_name',
  'white_elo',
  'white_fide_id',
  'white_country',
  'black_name',
  'black_elo',
  'black_fide_id',
  'black_country',
] as const;
