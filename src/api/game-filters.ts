// The filters of the game lists and exports (docs/api.md "Filters"): their parameters, strict like every
// other, and what they ask of the store (GameFilter).
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../platform/http/errors.ts';
import type { GameFilter, Store } from '../store/index.ts';
import { parseZonedTimestamp, zonedTimestampRule } from './timestamp.ts';

const text = (description: string) =>
  ({ type: 'string', minLength: 1, maxLength: 200, description }) as const;

export const filterQuery = {
  dateFrom: {
    type: 'string',
    format: 'date',
    description:
      'Games dated on or after this day (YYYY-MM-DD). A game whose Date tag is partial (2024.??.??) or ' +
      'missing has no date and matches no date filter.',
  },
  dateTo: { type: 'string', format: 'date', description: 'Games dated on or before this day (YYYY-MM-DD).' },
  updatedSince: {
    type: 'string',
    format: 'date-time',
    description: 'Games whose latest change (updatedAt) is at or after this time, RFC 3339 with a zone.',
  },
  player: text('Games with a player of exactly this name, as stored (case and spaces count).'),
  fideId: {
    type: 'string',
    pattern: '^[0-9]{1,20}$',
    description: 'Games with a player of exactly this FIDE id (digits).',
  },
  color: {
    type: 'string',
    enum: ['white', 'black'],
    description: 'With player or fideId only: the colour that player had.',
  },
  result: { type: 'string', enum: ['1-0', '0-1', '1/2-1/2', '*'], description: 'Games with this result.' },
  eco: {
    type: 'string',
    pattern: '^[A-E][0-9]{0,2}$',
    description: 'Games whose ECO code is this code (B90) or starts with this prefix (B9, B).',
  },
  event: text('Games of exactly this event, as stored.'),
} as const;

export type FilterName = keyof typeof filterQuery;
export const FILTER_NAMES = Object.keys(filterQuery) as FilterName[];

type FilterParams = Partial<Record<FilterName, string>>;

/** Whether the request names any filter. */
export function hasFilter(request: FastifyRequest): boolean {
  const query = request.query as FilterParams;
  return FILTER_NAMES.some((name) => query[name] !== undefined);
}

/**
 * The request's filter, or undefined without one. `updatedSince` becomes the owner's feed position just
 * before that time (Feed.positionAt), which the feed's (owner_id, seq) index serves.
 */
export async function readFilter(
  request: FastifyRequest,
  store: Store,
  ownerId: string,
): Promise<GameFilter | undefined> {
  if (!hasFilter(request)) return undefined;
  const query = request.query as FilterParams;
  if (query.color !== undefined && query.player === undefined && query.fideId === undefined) {
    throw new ApiError('invalid_request', 'color applies only with player or fideId');
  }
  const filter: GameFilter = {
    dateFrom: query.dateFrom,
    dateTo: query.dateTo,
    player: query.player,
    fideId: query.fideId,
    color: query.color as GameFilter['color'],
    result: query.result,
    eco: query.eco,
    event: query.event,
  };
  if (query.updatedSince !== undefined) {
    const since = parseZonedTimestamp(query.updatedSince);
    // Checked by the schema's format already (src/server/app.ts).
    if (since === undefined) throw new ApiError('invalid_request', zonedTimestampRule('updatedSince'));
    filter.afterSeq = await store.feed.positionAt(ownerId, since);
  }
  return filter;
}

/** The filter's parameters in one order: the name of a filtered list, for the positions kept of its pages. */
export function filterKey(request: FastifyRequest): string {
  const query = request.query as FilterParams;
  return FILTER_NAMES.filter((name) => query[name] !== undefined)
    .map((name) => `${name}=${query[name]}`)
    .join('&');
}
