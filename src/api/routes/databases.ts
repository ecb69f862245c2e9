import type { FastifyInstance } from 'fastify';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { ApiContext } from '../context.ts';
import { refusePaging, sendExport } from '../exports.ts';
import { filterKey, filterQuery, readFilter } from '../game-filters.ts';
import { answerFormat } from '../pgn.ts';
import { readRoute } from '../route.ts';
import { exportFormatParam, gameIdsParam, pageQuery, schemas } from '../schemas.ts';
import { listedDatabaseJson } from '../serialize.ts';
import { boundedTotal, sendPage } from './paging.ts';

export function databaseRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store } = context;

  readRoute(app, context, {
    url: '/databases',
    scope: 'databases.read',
    operationId: 'listDatabases',
    tag: 'Databases',
    summary: 'Databases owned by the user.',
    description: 'Every database of the user, in creation order, in one answer (not paged).',
    ok: { description: 'The databases.', schema: schemas.databases },
    total: true,
    handler: async (_request, reply, token) => {
      const databases = await store.databases.list(token.userId);
      reply.header('x-total-count', String(databases.length));
      return { data: databases.map(listedDatabaseJson) };
    },
  });

  readRoute(app, context, {
    url: '/databases/:id/games',
    scope: 'games.read',
    operationId: 'listDatabaseGames',
    tag: 'Databases',
    summary: 'Games of one database, as JSON pages, as one PGN file or as NDJSON.',
    description:
      'As JSON: one page of game list items in import order; follow the Link header for the next page. ' +
      'As PGN (format=pgn or Accept): every game of the database in one streamed file, games separated by ' +
      'one blank line. As NDJSON (format=ndjson or Accept: application/x-ndjson): one game detail a line. ' +
      'limit and offset are refused with either (400), as an export always holds every game. ' +
      'gameIds=true adds each game’s id to the PGN as a tag. An export is read from one snapshot of the ' +
      'store, and its X-Changes-Cursor header is the changes feed cursor that continues exactly after it. ' +
      'The filters (dateFrom, dateTo, updatedSince, player, fideId, color, result, eco, event) narrow every ' +
      'form, totals included.',
    params: { id: { type: 'string', description: 'Database UUID (letters in either case) or slug.' } },
    query: { ...pageQuery(50, 200), format: exportFormatParam, gameIds: gameIdsParam, ...filterQuery },
    ok: { description: 'One page of the database’s games, or its PGN file.', schema: schemas.gameList },
    pgn:
      'Every game of the database in PGN export format (charset=utf-8), in import order, separated by one ' +
      'blank line; an empty database gives an empty file. With gameIds=true each game has a ' +
      '[ChessportGameId "<uuid>"] tag right after the Seven Tag Roster.',
    ndjson:
      'Every game of the database as NDJSON, in import order: one JSON object a line, each the data of GET ' +
      '/api/v1/games/{id} for that game, every line ended by a newline; an empty database gives an empty body.',
    total: 'bounded',
    handler: async (request, reply, token) => {
      const { id } = request.params as { id: string };
      const { gameIds } = request.query as { gameIds?: boolean };
      const database = await store.databases.find(token.userId, id);
      if (!database) throw notFound('database');
      const format = answerFormat(request);
      if (gameIds !== undefined && format !== 'pgn') {
        throw new ApiError(
          'invalid_request',
          'gameIds applies to the PGN export only (format=pgn or Accept: application/x-chess-pgn), whose ' +
            'games have no id otherwise',
        );
      }
      const filter = await readFilter(request, store, database.ownerId);
      if (format !== 'json') {
        refusePaging(request, `${format === 'pgn' ? 'PGN' : 'NDJSON'} export`);
        return sendExport(
          request,
          reply,
          context,
          token,
          { ownerId: database.ownerId, databaseId: database.id, filter },
          { format, name: database.slug, gameIds },
        );
      }
      if (filter) {
        const scope = { ownerId: database.ownerId, databaseId: database.id, filter };
        return sendPage(
          request,
          reply,
          context,
          database.ownerId,
          `database ${database.id} ${filterKey(request)}`,
          (page) => store.games.listFiltered(scope, page),
          boundedTotal(context, (upTo) => store.games.countFiltered(scope, upTo)),
        );
      }
      return sendPage(
        request,
        reply,
        context,
        database.ownerId,
        `database ${database.id}`,
        (page) => store.games.listInDatabase(database.id, page),
        async () => ({ count: await store.databases.gameTotal(database.id) }),
      );
    },
  });
}
