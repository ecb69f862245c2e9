import type { FastifyInstance } from 'fastify';
import { decodeCursor } from '../../domain/cursor.ts';
import { pairwiseId } from '../../domain/pairwise.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { ApiContext } from '../context.ts';
import { refusePaging, sendExport } from '../exports.ts';
import { filterKey, filterQuery, readFilter } from '../game-filters.ts';
import { sendByIds } from '../game-ids.ts';
import { answerFormat, pgnHeaders, wantsPgn } from '../pgn.ts';
import { readRoute } from '../route.ts';
import { exportFormatParam, formatParam, idsParam, minCursorParam, pageQuery, schemas } from '../schemas.ts';
import { gameDetailJson } from '../serialize.ts';
import { boundedTotal, sendPage } from './paging.ts';

export function gameRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store } = context;

  readRoute(app, context, {
    url: '/games',
    scope: 'games.read',
    operationId: 'listGames',
    tag: 'Games',
    summary: 'Games of the user across all databases: JSON pages, one PGN file or NDJSON.',
    description:
      'One page of game list items (no moves, no PGN), oldest import first, stable under new imports; ' +
      'follow the Link header for the next page. As PGN (format=pgn or Accept) or NDJSON (format=ndjson or ' +
      'Accept: application/x-ndjson): every game of the user in one streamed answer, read from one snapshot ' +
      'of the store, with X-Changes-Cursor, the changes feed cursor that continues exactly after it; limit ' +
      'and offset are refused with either (400). The filters (dateFrom, dateTo, updatedSince, player, fideId, ' +
      'color, result, eco, event) narrow every form, totals included. ids= gives the games named, as details ' +
      'or one PGN file.',
    query: { ...pageQuery(50, 200), format: exportFormatParam, ids: idsParam, ...filterQuery },
    ok: { description: 'One page of games.', schema: schemas.gameList },
    pgn:
      'Every game of the user in PGN export format (charset=utf-8), in import order across databases, ' +
      'separated by one blank line; no games give an empty file.',
    ndjson:
      'Every game of the user as NDJSON, in import order across databases: one JSON object a line, each the ' +
      'data of GET /api/v1/games/{id} for that game, every line ended by a newline.',
    total: 'bounded',
    handler: async (request, reply, token) => {
      const { ids } = request.query as { ids?: string };
      if (ids !== undefined) return sendByIds(request, reply, context, token, ids);
      const format = answerFormat(request);
      const filter = await readFilter(request, store, token.userId);
      if (format !== 'json') {
        refusePaging(request, `${format === 'pgn' ? 'PGN' : 'NDJSON'} export`);
        return sendExport(
          request,
          reply,
          context,
          token,
          { ownerId: token.userId, filter },
          { format, name: 'games' },
        );
      }
      if (filter) {
        const scope = { ownerId: token.userId, filter };
        return sendPage(
          request,
          reply,
          context,
          token.userId,
          `games ${filterKey(request)}`,
          (page) => store.games.listFiltered(scope, page),
          boundedTotal(context, (upTo) => store.games.countFiltered(scope, upTo)),
        );
      }
      return sendPage(
        request,
        reply,
        context,
        token.userId,
        'games',
        (page) => store.games.list(token.userId, page),
        async () => ({ count: await store.games.total(token.userId) }),
      );
    },
  });

  readRoute(app, context, {
    url: '/games/:id',
    scope: 'games.read',
    operationId: 'getGame',
    tag: 'Games',
    summary: 'One game with full data, as JSON or as PGN.',
    description:
      'The game detail: every list item field plus fen, moves (UCI), pgn, metadata and updatedAt, enough ' +
      'to mirror the game. format=pgn or Accept: application/x-chess-pgn gives the PGN text instead.',
    params: { id: { type: 'string', description: 'Game UUID (letters in either case).' } },
    query: { format: formatParam, minCursor: minCursorParam },
    ok: { description: 'The game, as JSON or as PGN.', schema: schemas.gameDetail },
    pgn: 'The one game in PGN export format (charset=utf-8), as its pgn field holds it.',
    handler: async (request, reply, token) => {
      const { id } = request.params as { id: string };
      const { minCursor } = request.query as { minCursor?: string };
      let minSeq: number | undefined;
      if (minCursor !== undefined) {
        minSeq = decodeCursor(
          context.secret,
          pairwiseId(context.secret, token.appSector, token.userId),
          minCursor,
        );
        if (minSeq === undefined) {
          throw new ApiError(
            'invalid_request',
            'minCursor is not valid: pass the nextCursor of a feed page, unchanged, with the same token',
          );
        }
      }
      const game = await store.games.get(token.userId, id, minSeq);
      if (!game) throw notFound('game');
      if (wantsPgn(request)) return pgnHeaders(reply, game.slug).send(game.pgn);
      return { data: gameDetailJson(game) };
    },
  });
}
