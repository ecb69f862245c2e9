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
  /** The app as an OAuth client (its client_id is its id); null: it gets tokens from the operator only. */
  oauth: OAuthClient | null;
  /** The user who registered it on /developers; null: the operator's CLI made it. */
  ownerId: string | null;
  homepage: string | null;
  description: string | null;
  /** Until when the secret before the latest rotation still works; null when none does. */
  previousSecretUntil: number | null;
}

export interface OAuthClient {
  /** public: no secret, PKCE alone (native and browser apps); confidential: PKCE and a client secret. */
  type: 'public' | 'confidential';
  /** The exact redirect URIs of the authorization code flow (none: the device flow only). */
  redirectUris: string[];
  /** Whether the app may use the device authorization grant (RFC 8628). */
  deviceFlow: boolean;
}

/** A user's consent to an app, under which its OAuth tokens are issued. */
export interface Grant {
  id: string;
  userId: string;
  userLogin: string;
  appId: string;
  appName: string;
  scopes: string[];
  createdAt: number;
  /** When the app last got a token under the grant (a code exchanged, a refresh). */
  lastUsedAt: number | null;
  revokedAt: number | null;
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
  /** The OAuth grant the token was issued under; null for a token the operator issued, or a personal one. */
  grantId: string | null;
  /** What its user wrote of a personal access token. */
  description: string | null;
  /** When it last authenticated an API request (to the minute: tokens.ts). */
  lastUsedAt: number | null;
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

/**
 * A game's detail with its metadata as the store holds it: JSON text as JSON.stringify wrote it at the write
 * (the export's lines splice it in as it is rather than parse it and write it again).
 */
export interface GameDetailText extends Omit<GameDetail, 'metadata'> {
  metadataJson: string;
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

/** A long run of writes (an import): see `store.dialect.bulkWrites`. */
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

/** The events an endpoint may subscribe to (docs/webhooks.md#events); `ping` goes to whoever asks for it. */
export const SUBSCRIBABLE_EVENTS = ['changes.available', 'grant.revoked'] as const;
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

/** Every event a delivery may carry. */
export type WebhookEventType = SubscribableEvent | 'ping';

/** An app's webhook endpoint (docs/webhooks.md), without its secrets. */
export interface WebhookEndpoint {
  id: string;
  appId: string;
  appName: string;
  /** The app's pairwise-id sector: what the user ids of its deliveries are made with. */
  appSector: string;
  url: string;
  createdAt: number;
  disabledAt: number | null;
  disabledReason: string | null;
  /** The first failed attempt since the endpoint last answered 2xx; null while it succeeds. */
  failingSince: number | null;
  /** Until when the secret before the latest rotation still signs beside the new one; null when none does. */
  previousSecretUntil: number | null;
  /** The event types it subscribes to; null: every one (also those added later). */
  events: SubscribableEvent[] | null;
}

/** An endpoint as the delivery worker signs for it: every secret that signs now, the newest first. */
export interface WebhookTarget extends WebhookEndpoint {
  secrets: string[];
}

/** pending: not attempted yet; retrying: pending after a failed attempt; failed: given up. */
export type WebhookDeliveryState = 'pending' | 'retrying' | 'delivered' | 'failed' | 'dropped';

/** A delivery as the operator sees it (`chessport webhooks deliveries`). */
export interface WebhookDelivery {
  id: string;
  messageId: string;
  endpointId: string;
  appName: string;
  userId: string;
  userLogin: string;
  eventType: WebhookEventType;
  state: WebhookDeliveryState;
  /** How many changes (seqs) it stands for (`changes.available`; 0 for the other events). */
  changes: number;
  attempts: number;
  createdAt: number;
  lastChangeAt: number;
  /** When it is next attempted (pending or retrying only). */
  dueAt: number | null;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  /** How long its last attempt took, from sending to the answer's end or its failure. */
  lastLatencyMs: number | null;
  finishedAt: number | null;
}

/** A delivery the worker has leased to attempt (Store.claimWebhookDeliveries). */
export interface ClaimedDelivery {
  id: string;
  messageId: string;
  endpointId: string;
  userId: string;
  eventType: WebhookEventType;
  version: number;
  changes: number;
  /** When its latest change was made (`changes.available`), or when its event happened. */
  lastChangeAt: number;
  /** This attempt's number, from 1. */
  attempt: number;
  /** The lease's end: what the attempt's outcome is recorded under (no other instance holds it meanwhile). */
  lease: number;
}

/** What the previous delivery of an endpoint and user was, for the coalescing of the next one. */
export interface PreviousDelivery {
  /** When it was last attempted (null: never). */
  sentAt: number | null;
  spacingMs: number;
  changes: number;
}

/** When a new delivery of an endpoint and user is due, given the previous one (docs/webhooks.md). */
export type CoalescingRule = (
  previous: PreviousDelivery | undefined,
  now: number,
) => {
  dueAt: number;
  spacingMs: number;
};

/** The outbox and the deliveries waiting, for the metrics. */
export interface WebhookQueue {
  signals: number;
  oldestSignalAt: number | null;
  pending: number;
  oldestPendingAt: number | null;
}
