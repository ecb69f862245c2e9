// Whole exports (docs/api.md "Exports"): every game of a database, or of the user, narrowed by the filters,
// as one PGN file or as NDJSON (one game detail a line), streamed from one snapshot of the store. The answer
// names, in X-Changes-Cursor, the changes feed cursor that continues exactly after that snapshot.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { encodeCursor } from '../domain/cursor.ts';
import { pairwiseId } from '../domain/pairwise.ts';
import { ApiError } from '../platform/http/errors.ts';
import type { ExportScope, TokenInfo } from '../store/index.ts';
import type { ApiContext } from './context.ts';
import { NDJSON_TYPE, pgnHeaders, withGameIdTag } from './pgn.ts';
import { willBeNotModified } from './plugins/conditional.ts';
import { gameDetailLine } from './serialize.ts';

export interface ExportAnswer {
  format: 'pgn' | 'ndjson';
  /** The PGN file's name, without .pgn. */
  name: string;
  /** PGN only: each game's id in a ChessportGameId tag. */
  gameIds?: boolean;
}

/** limit and offset name a page, which an export never is: refused, not ignored (400). */
export function refusePaging(request: FastifyRequest, what: string): void {
  // The parsed query has the defaults filled in; the URL tells what the client actually sent.
  const sent = new URLSearchParams(request.url.split('?')[1] ?? '');
  if (sent.has('limit') || sent.has('offset')) {
    throw new ApiError(
      'invalid_request',
      `limit and offset do not apply to the ${what}, which holds every game`,
    );
  }
}

/** Streams the export of `scope` as `answer` says, under the rules of long answers and heavy requests. */
export async function sendExport(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ApiContext,
  token: TokenInfo,
  scope: ExportScope,
  answer: ExportAnswer,
): Promise<FastifyReply> {
  // A heavy request (docs/api.md "Heavy requests"): a slot of the app and user's until the answer ends.
  // Not for an answer that sends no body (HEAD, 304), whose stream is never read.
  if (request.method === 'GET' && !willBeNotModified(request))
    await context.heavy.hold(request, reply, 'export');
  const games = await context.store.games.openExport(scope);
  // The snapshot ends with its walk, or with the answer when the walk never starts (HEAD, 304, a client
  // gone before the first batch).
  reply.raw.once('close', () => void games.end());
  // Cursors are bound to the reader as the feed knows it: this user through this app's pairwise id.
  const reader = pairwiseId(context.secret, token.appSector, token.userId);
  reply.header('x-changes-cursor', encodeCursor(context.secret, reader, games.seq));
  // Streamed game by game from keyset batches: constant memory however large the export. The token is
  // checked again before each batch: the export ends with it (long-answers.ts).
  const body = context.longAnswers.stream(request, reply, async function* (check) {
    if (answer.format === 'ndjson') {
      for await (const game of games.detailTexts({ beforeBatch: check })) yield gameDetailLine(game);
      return;
    }
    let first = true;
    for await (const game of games.pgn({ beforeBatch: check })) {
      const pgn = answer.gameIds ? withGameIdTag(game.pgn, game.id) : game.pgn;
      yield first ? pgn : `\n${pgn}`;
      first = false;
    }
  });
  if (answer.format === 'ndjson') return reply.header('content-type', NDJSON_TYPE).send(body);
  return pgnHeaders(reply, answer.name).send(body);
}
