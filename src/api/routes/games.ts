import type { FastifyInstance } from 'fastify';
import { decodeCursor } from '../../domain/cursor.ts';
import { pairwiseId } from '../../domain/pairwise.ts';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { ApiContext } from '../context.ts';
import { pgnHeaders, wantsPgn } from '../pgn.ts';
import { readRoute } from '../route.ts';
import { formatParam, minCursorParam, pageQuery, schemas } from '../schemas.ts';
import { gameDetailJson } from '../serialize.ts';
import { sendPage } from './paging.ts';

export function gameRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store } = context;

  readRoute(app, context, {
    url: '/games',
    scope: 'games.read',
    operationId: 'listGames',
    tag: 'Games',
    summary: 'Games of the user across all databases, lightweight, in import order.',
    description:
      'One page of game list items (no moves, no PGN), oldest import first, stable under new imports; ' +
      'follow the Link header for the next page.',
    query: pageQuery(50, 200),
    ok: { description: 'One page of games.', schema: schemas.gameList },
    total: true,
    handler: async (request, reply, token) =>
      sendPage(
        request,
        reply,
        context,
        token.userId,
        'games',
        (page) => store.games.list(token.userId, page),
        () => store.games.total(token.userId),
      ),
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
