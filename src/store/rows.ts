// The store's rows as the records it hands out (types.ts): one mapper per record, for every query that
// reads it.
import type { Selectable } from 'kysely';
import { type DB, type GamesTable, playerColumns } from './schema.ts';
import type {
  App,
  Database,
  ExpandedChange,
  GameChange,
  GameDetail,
  GameDetailText,
  GameSummary,
  Grant,
  Player,
  TokenInfo,
  User,
} from './types.ts';

export type GameRow = Selectable<GamesTable>;

export function toUser(row: Selectable<DB['users']>): User {
  return {
    id: row.id,
    login: row.login,
    name: row.name,
    email: row.email,
    image: row.image,
    createdAt: Number(row.created_at),
  };
}

/** Until when an app's previous secret works, if it still does at `now`. */
function previousSecretUntil(row: Selectable<DB['apps']>, now: number): number | null {
  const until = row.previous_secret_until === null ? null : Number(row.previous_secret_until);
  return row.previous_secret_hash !== null && until !== null && until > now ? until : null;
}

export function toApp(row: Selectable<DB['apps']>, now = Date.now()): App {
  const type = row.client_type;
  return {
    id: row.id,
    name: row.name,
    sector: row.sector,
    createdAt: Number(row.created_at),
    oauth:
      type === 'public' || type === 'confidential'
        ? {
            type,
            redirectUris: JSON.parse(row.redirect_uris) as string[],
            deviceFlow: row.device_flow === 1,
          }
        : null,
    ownerId: row.owner_id,
    homepage: row.homepage,
    description: row.description,
    previousSecretUntil: previousSecretUntil(row, now),
  };
}

/** A tokens or grants row's id, user and app, joined with the user's login and the app's name (issuedQuery). */
export interface IssuedRow {
  id: string;
  user_id: string;
  login: string;
  app_id: string;
  app_name: string;
}

/** What a token and a grant say first: their id, and the user and the app they were issued to. */
function issued(row: IssuedRow) {
  const { id, user_id: userId, login: userLogin, app_id: appId, app_name: appName } = row;
  return { id, userId, userLogin, appId, appName };
}

const scopeList = (scopes: string) => scopes.split(' ').filter(Boolean);

/** A grants row joined with its user's login and its app's name (grants.ts, grantQuery). */
export interface GrantRow extends IssuedRow {
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export function toGrant(row: GrantRow): Grant {
  return {
    ...issued(row),
    scopes: scopeList(row.scopes),
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

/** A tokens row joined with its user's login and its app's name and sector (tokens.ts, tokenQuery). */
export interface TokenRow extends IssuedRow {
  sector: string;
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
  grant_id: string | null;
  description: string | null;
  last_used_at: number | null;
}

export function toTokenInfo(row: TokenRow): TokenInfo {
  return {
    ...issued(row),
    appSector: row.sector,
    scopes: scopeList(row.scopes),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    createdAt: Number(row.created_at),
    grantId: row.grant_id,
    description: row.description,
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}

export function toDatabase(row: Selectable<DB['databases']>): Database {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    slug: row.slug,
    private: row.private === 1,
    maxGames: row.max_games === null ? null : Number(row.max_games),
    gameCount: Number(row.game_count),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The columns of a game's list entry (GameSummary). */
export const summaryColumns = [
  'id',
  'slug',
  'database_id',
  'event',
  'date',
  'result',
  'eco',
  ...playerColumns,
] as const;

/** The columns of a game's feed item (GameChange). */
export const changeColumns = [
  'seq',
  'id',
  'database_id',
  'updated_at',
  'deleted',
  'result',
  ...playerColumns,
] as const;

/** The columns of a game's detail (GameDetail). */
export const detailColumns = [...summaryColumns, 'fen', 'moves', 'pgn', 'metadata', 'updated_at'] as const;

/** The columns of a feed item with its game's detail (ExpandedChange). */
export const expandedChangeColumns = [
  ...changeColumns,
  'slug',
  'event',
  'date',
  'eco',
  'fen',
  'moves',
  'pgn',
  'metadata',
] as const;

type PlayerColumns<C extends string> = {
  [K in `${C}_name` | `${C}_fide_id` | `${C}_country`]: string | null;
} & { [K in `${C}_elo`]: number | null };

function player<C extends 'white' | 'black'>(row: PlayerColumns<C>, color: C): Player {
  const r = row as unknown as Record<string, string | number | null>;
  const elo = r[`${color}_elo`];
  return {
    name: (r[`${color}_name`] as string | null) ?? null,
    elo: elo === null || elo === undefined ? null : Number(elo),
    fideId: (r[`${color}_fide_id`] as string | null) ?? null,
    country: (r[`${color}_country`] as string | null) ?? null,
  };
}

export function toSummary(row: Pick<GameRow, (typeof summaryColumns)[number]>): GameSummary {
  return {
    id: row.id,
    slug: row.slug,
    databaseId: row.database_id,
    event: row.event,
    date: row.date,
    result: row.result,
    eco: row.eco,
    white: player(row, 'white'),
    black: player(row, 'black'),
  };
}

/** A row as a game's detail, its metadata left as the JSON text the row holds (GameDetailText). */
export function toDetailText(row: Pick<GameRow, (typeof detailColumns)[number]>): GameDetailText {
  return {
    ...toSummary(row),
    fen: row.fen,
    moves: row.moves,
    pgn: row.pgn,
    metadataJson: row.metadata,
    updatedAt: Number(row.updated_at),
  };
}

/** A row as a game's detail, its metadata parsed. */
export function toDetail(row: Pick<GameRow, (typeof detailColumns)[number]>): GameDetail {
  const { metadataJson, updatedAt, ...game } = toDetailText(row);
  return { ...game, metadata: JSON.parse(metadataJson) as Record<string, string>, updatedAt };
}

export function toChange(row: Pick<GameRow, (typeof changeColumns)[number]>): GameChange {
  return {
    seq: Number(row.seq),
    id: row.id,
    databaseId: row.database_id,
    updatedAt: Number(row.updated_at),
    deleted: row.deleted === 1,
    result: row.result,
    white: player(row, 'white'),
    black: player(row, 'black'),
  };
}

/** A feed item with its game's detail, from a whole games row: a tombstone has none. */
export function toExpandedChange(row: Pick<GameRow, (typeof expandedChangeColumns)[number]>): ExpandedChange {
  return { ...toChange(row), game: row.deleted === 1 ? null : toDetail(row) };
}
