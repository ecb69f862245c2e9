// GET /games?ids=: games by id in bulk (docs/api.md "Games by id"), as JSON details or one PGN file.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../platform/http/errors.ts';
import type { TokenInfo } from '../store/index.ts';
import type { ApiContext } from './context.ts';
import { refusePaging } from './exports.ts';
import { hasFilter } from './game-filters.ts';
import { answerFormat, pgnHeaders } from './pgn.ts';
import { MAX_IDS } from './schemas.ts';
import { gameDetailJson } from './serialize.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JSON_TYPE = 'application/json; charset=utf-8';

/** The ids of `ids=`, in lower case, each once where it first appears; 400 for anything but 1-200 UUIDs. */
export function parseIds(text: string): string[] {
  const items = text.split(',');
  if (items.length > MAX_IDS) throw new ApiError('invalid_request', `ids names at most ${MAX_IDS} games`);
  for (const item of items) {
    if (!UUID.test(item)) {
      throw new ApiError('invalid_request', 'ids must be game UUIDs separated by commas, without spaces');
    }
  }
  return [...new Set(items.map((id) => id.toLowerCase()))];
}

/** The user's games among `ids`, in the order given: another user's and unknown ids are left out alike. */
export async function sendByIds(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ApiContext,
  token: TokenInfo,
  ids: string,
): Promise<FastifyReply> {
  refusePaging(request, 'games named by ids');
  if (hasFilter(request)) throw new ApiError('invalid_request', 'ids cannot be combined with the filters');
  const format = answerFormat(request);
  if (format === 'ndjson') throw new ApiError('invalid_request', 'ids gives JSON or PGN, not NDJSON');
  const games = await context.store.games.byIds(token.userId, parseIds(ids));
  if (format === 'pgn') return pgnHeaders(reply, 'games').send(games.map((game) => game.pgn).join('\n'));
  // Details, which the route's list serialiser (of list items) would cut down to their summary fields.
  return reply.type(JSON_TYPE).send(JSON.stringify({ data: games.map((game) => gameDetailJson(game)) }));
}
