import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../app.ts';
import { notFound } from '../errors.ts';
import { pgnHeaders, wantsPgn } from '../pgn.ts';
import { readRoute } from '../route.ts';
import { formatParam, pageQuery, schemas } from '../schemas.ts';
import { gameDetailJson, gameSummaryJson } from '../serialize.ts';
import { sendPage } from './paging.ts';

export function gameRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store } = context;

  readRoute(app, context, {
    url: '/games',
    scope: 'games.read',
    summary: 'Games of the user across all databases, lightweight, in import order.',
    query: pageQuery(50, 200),
    response: schemas.gameList.response,
    handler: async (request, reply, token) =>
      sendPage(request, reply, async (page) =>
        (await store.listGames(token.userId, page)).map(gameSummaryJson),
      ),
  });

  readRoute(app, context, {
    url: '/games/:id',
    scope: 'games.read',
    summary: 'One game with full data, as JSON or as PGN.',
    params: { id: { type: 'string', description: 'Game UUID.' } },
    query: { format: formatParam },
    response: schemas.gameDetail.response,
    handler: async (request, reply, token) => {
      const { id } = request.params as { id: string };
      const game = await store.getGame(token.userId, id);
      if (!game) throw notFound('game');
      if (wantsPgn(request)) return pgnHeaders(reply, game.slug).send(game.pgn);
      return { data: gameDetailJson(game) };
    },
  });
}
