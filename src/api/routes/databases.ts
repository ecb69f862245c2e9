import type { FastifyInstance } from 'fastify';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { ApiContext } from '../context.ts';
import { pgnHeaders, wantsPgn, withGameIdTag } from '../pgn.ts';
import { willBeNotModified } from '../plugins/conditional.ts';
import { readRoute } from '../route.ts';
import { formatParam, gameIdsParam, pageQuery, schemas } from '../schemas.ts';
import { listedDatabaseJson } from '../serialize.ts';
import { sendPage } from './paging.ts';

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
    summary: 'Games of one database, as JSON pages or as one PGN file.',
    description:
      'As JSON: one page of game list items in import order; follow the Link header for the next page. ' +
      'As PGN (format=pgn or Accept): every game of the database in one streamed file, games separated by ' +
      'one blank line; limit and offset are refused with it (400), as the export always holds every game. ' +
      'gameIds=true adds each game’s id to it as a tag.',
    params: { id: { type: 'string', description: 'Database UUID (letters in either case) or slug.' } },
    query: { ...pageQuery(50, 200), format: formatParam, gameIds: gameIdsParam },
    ok: { description: 'One page of the database’s games, or its PGN file.', schema: schemas.gameList },
    pgn:
      'Every game of the database in PGN export format (charset=utf-8), in import order, separated by one ' +
      'blank line; an empty database gives an empty file. With gameIds=true each game has a ' +
      '[ChessportGameId "<uuid>"] tag right after the Seven Tag Roster.',
    total: true,
    handler: async (request, reply, token) => {
      const { id } = request.params as { id: string };
      const { gameIds } = request.query as { gameIds?: boolean };
      const database = await store.databases.find(token.userId, id);
      if (!database) throw notFound('database');
      if (gameIds !== undefined && !wantsPgn(request)) {
        throw new ApiError(
          'invalid_request',
          'gameIds applies to the PGN export only (format=pgn or Accept: application/x-chess-pgn), whose ' +
            'games have no id otherwise',
        );
      }
      if (wantsPgn(request)) {
        // The parsed query has the defaults filled in; the URL tells what the client actually sent.
        const sent = new URLSearchParams(request.url.split('?')[1] ?? '');
        if (sent.has('limit') || sent.has('offset')) {
          throw new ApiError(
            'invalid_request',
            'limit and offset do not apply to the PGN export, which holds every game of the database',
          );
        }
        // A heavy request (docs/api.md "Heavy requests"): a slot of the app and user's until the answer ends.
        // Not for an answer that sends no body (HEAD, 304), whose stream is never read.
        if (request.method === 'GET' && !willBeNotModified(request))
          await context.heavy.hold(request, reply, 'export');
        // Streamed game by game from keyset batches: constant memory however large the database. The token
        // is checked again before each batch: the export ends with it (long-answers.ts).
        const body = context.longAnswers.stream(request, reply, async function* (check) {
          let first = true;
          for await (const game of store.games.databasePgn(database.id, { beforeBatch: check })) {
            const pgn = gameIds ? withGameIdTag(game.pgn, game.id) : game.pgn;
            yield first ? pgn : `\n${pgn}`;
            first = false;
          }
        });
        return pgnHeaders(reply, database.slug).send(body);
      }
      return sendPage(
        request,
        reply,
        context,
        database.ownerId,
        `database ${database.id}`,
        (page) => store.games.listInDatabase(database.id, page),
        () => store.databases.gameTotal(database.id),
      );
    },
  });
}
