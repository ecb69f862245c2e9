// Table types of the store, shared by both dialects. Times are integer milliseconds since the epoch (UTC).
import type { Generated, Selectable } from 'kysely';

export interface UsersTable {
  id: string;
  login: string;
  name: string | null;
  email: string | null;
  image: string | null;
  created_at: number;
  /** The password's scrypt hash in PHC form (docs/oauth.md); null: the user cannot sign in. */
  password_hash: Generated<string | null>;
  /** 1: the operator let the user use the developer console (DEVELOPER_CONSOLE=invite; migration 0013). */
  developer: Generated<number>;
}

export interface AppsTable {
  id: string;
  name: string;
  /** Pairwise-id sector: apps of one sector see the same user ids (OpenID Connect's sector identifier). */
  sector: string;
  created_at: number;
  /** OAuth client type, 'public' or 'confidential'; null: the app is no OAuth client (migration 0009). */
  client_type: Generated<string | null>;
  /** JSON array of the exact redirect URIs of the authorization code flow. */
  redirect_uris: Generated<string>;
  /** 1: the app may use the device authorization grant. */
  device_flow: Generated<number>;
  /** A confidential client's secret as its SHA-256, hex. */
  client_secret_hash: Generated<string | null>;
  /** The user who registered it on /developers; null: the operator's CLI made it (migration 0013). */
  owner_id: Generated<string | null>;
  homepage: Generated<string | null>;
  description: Generated<string | null>;
  /** The secret's hash before the latest rotation, which works until previous_secret_until. */
  previous_secret_hash: Generated<string | null>;
  previous_secret_until: Generated<number | null>;
  /** When its developer deleted it: no client any more, its grants and tokens revoked. */
  deleted_at: Generated<number | null>;
  /** The user whose personal access tokens it issues (their own built-in app); null for every other app. */
  personal_for: Generated<string | null>;
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
  /** The OAuth grant the token was issued under; null for a token the operator issued (migration 0009). */
  grant_id: Generated<string | null>;
  /** What its user wrote of a personal access token (migration 0013). */
  description: Generated<string | null>;
  /** When it last authenticated an API request, to the minute (migration 0013). */
  last_used_at: Generated<number | null>;
}

/** A user's consent to an app (migration 0009): what its OAuth tokens are issued under. */
export interface GrantsTable {
  id: string;
  user_id: string;
  app_id: string;
  /** Space-separated scopes granted. */
  scopes: string;
  /** The authorization server's own record of the grant, JSON. */
  payload: string;
  created_at: number;
  /** When the app last got a token under the grant (a code exchanged, a refresh). */
  last_used_at: number | null;
  revoked_at: number | null;
}

/**
 * What the authorization server keeps besides grants and access tokens (migration 0009): codes, refresh
 * tokens, device codes, sessions, interactions, each under the SHA-256 of its id.
 */
export interface OAuthRecordsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  /** SHA-256 of a device code's user code. */
  user_code: string | null;
  /** The user a sign-in record (a session, an interaction that signed in) signs in; null for the rest. */
  user_id: string | null;
  expires_at: number | null;
  consumed_at: number | null;
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
   * export's ETag is made of (Databases.version).
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

/** Migration 0010: an app's webhook endpoint (docs/webhooks.md). */
export interface WebhookEndpointsTable {
  id: string;
  app_id: string;
  url: string;
  /** `whsec_` and the base64 of the key: the Standard Webhooks form. */
  secret: string;
  /** The secret before the latest rotation, which also signs until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
  disabled_at: number | null;
  disabled_reason: string | null;
  /** The first failed attempt since the endpoint last answered 2xx. */
  failing_since: number | null;
  /** Migration 0014: the event types it subscribes to, space-separated; null: every one. */
  events: string | null;
}

/** Migration 0010: the outbox, one row per user with changes the delivery worker has not fanned out yet. */
export interface WebhookSignalsTable {
  user_id: string;
  /** How many changes (seqs) the row stands for. */
  changes: number;
  first_at: number;
  last_at: number;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dropped';

/** Migration 0010: a signal for one endpoint and user, with its attempts' outcome. */
export interface WebhookDeliveriesTable {
  id: string;
  /** The webhook-id of its next (or last) attempt. */
  message_id: string;
  endpoint_id: string;
  user_id: string;
  status: WebhookDeliveryStatus;
  changes: number;
  /** Rises with every change that joins it while pending. */
  version: number;
  /** The least time after the previous delivery of its endpoint and user that it waited (coalescing). */
  spacing_ms: number;
  created_at: number;
  last_change_at: number;
  due_at: number;
  attempts: number;
  leased_until: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  finished_at: number | null;
  /** Migration 0014: `changes.available`, `ping` or `grant.revoked`. */
  event_type: string;
  /** Migration 0014: how long its last attempt took, from sending to the answer's end (or its failure). */
  last_latency_ms: number | null;
}

export interface DB {
  users: UsersTable;
  apps: AppsTable;
  tokens: TokensTable;
  grants: GrantsTable;
  oauth_records: OAuthRecordsTable;
  databases: DatabasesTable;
  games: GamesTable;
  settings: SettingsTable;
  sequences: SequencesTable;
  feed_heads: FeedHeadsTable;
  game_keys: GameKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_signals: WebhookSignalsTable;
  webhook_deliveries: WebhookDeliveriesTable;
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
