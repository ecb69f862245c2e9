import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { ApiError, notFound } from '../errors.ts';
import { pgnHeaders, wantsPgn } from '../pgn.ts';
import { willBeNotModified } from '../plugins/conditional.ts';
import { readRoute } from '../route.ts';
import { formatParam, pageQuery, schemas } from '../schemas.ts';
import { databaseJson } from '../serialize.ts';
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
    handler: async (_request, _reply, token) => ({
      data: (await store.listDatabases(token.userId)).map(databaseJson),
    }),
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
      'one blank line; limit and offset are refused with it (400), as the export always holds every game.',
    params: { id: { type: 'string', description: 'Database UUID (letters in either case) or slug.' } },
    query: { ...pageQuery(50, 200), format: formatParam },
    ok: { description: 'One page of the database’s games, or its PGN file.', schema: schemas.gameList },
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
        // A heavy request (docs/api.md "Heavy requests"): a slot of the app and user's until the answer ends.
        // Not for an answer that sends no body (HEAD, 304), whose stream is never read.
        if (request.method === 'GET' && !willBeNotModified(request))
          await context.heavy.hold(request, reply, 'export');
        // Streamed game by game from keyset batches: constant memory however large the database. The token
        // is checked again before each batch: the export ends with it (long-answers.ts).
        const body = context.longAnswers.stream(request, reply, async function* (check) {
          let first = true;
          for await (const pgn of store.databasePgn(database.id, { beforeBatch: check })) {
            yield first ? pgn : `\n${pgn}`;
            first = false;
          }
        });
        return pgnHeaders(reply, database.slug).send(body);
      }
      return sendPage(request, reply, context, database.ownerId, `database ${database.id}`, (page) =>
        store.listDatabaseGames(database.id, page),
      );
    },
  });
}
