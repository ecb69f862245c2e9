import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../app.ts';
import { ApiError, notFound } from '../errors.ts';
import { pgnHeaders, wantsPgn } from '../pgn.ts';
import { readRoute } from '../route.ts';
import { formatParam, pageQuery, schemas } from '../schemas.ts';
import { databaseJson, gameSummaryJson } from '../serialize.ts';
import { sendPage } from './paging.ts';

export function databaseRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store } = context;

  readRoute(app, context, {
    url: '/databases',
    scope: 'databases.read',
    summary: 'Databases owned by the user.',
    response: schemas.databases.response,
    handler: async (_request, _reply, token) => ({
      data: (await store.listDatabases(token.userId)).map(databaseJson),
    }),
  });

  readRoute(app, context, {
    url: '/databases/:id/games',
    scope: 'games.read',
    summary: 'Games of one database, as JSON pages or as one PGN file.',
    params: { id: { type: 'string', description: 'Database UUID or slug.' } },
    query: { ...pageQuery(50, 200), format: formatParam },
    response: schemas.gameList.response,
    handler: async (request, reply, token) => {
      const { id } = request.params as { id: string };
      const database = await store.findDatabase(token.userId, id);
      if (!database) throw notFound('database');
      if (wantsPgn(request)) {
        // The parsed query has the defaults filled in; the URL tells what the client actually sent.
        const sent = new URLSearchParams(request.url.split('?')[1] ?? '');
        if (sent.has('limit') || sent.has('offset')) {
          throw new ApiError(
            'invalid_request',
            'limit and offset do not apply to the PGN export, which holds every game of the database',
          );
        }
        // Streamed game by game from keyset batches: constant memory however large the database.
        const games = store.databasePgn(database.id);
        const body = Readable.from(
          (async function* () {
            let first = true;
            for await (const pgn of games) {
              yield first ? pgn : `\n${pgn}`;
              first = false;
            }
          })(),
        );
        return pgnHeaders(reply, database.slug).send(body);
      }
      return sendPage(request, reply, async (page) =>
        (await store.listDatabaseGames(database.id, page)).map(gameSummaryJson),
      );
    },
  });
}
