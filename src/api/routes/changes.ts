// GET /changes: the feed of the user's changed games, oldest change first (docs/design.md 18-22).
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { ApiError } from '../errors.ts';
import { pairwiseId } from '../pairwise.ts';
import { readRoute } from '../route.ts';
import { changesQuery, schemas } from '../schemas.ts';
import { changeJson } from '../serialize.ts';
import { parseZonedTimestamp } from '../timestamp.ts';

interface ChangesQuery {
  cursor?: string;
  since?: string;
  limit: number;
  wait?: number;
}

export function changeRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store, secret, waits } = context;

  readRoute(app, context, {
    url: '/changes',
    scope: 'games.read',
    operationId: 'listChanges',
    tag: 'Changes feed',
    summary: 'Incremental feed of changed games, tombstones included, oldest change first.',
    description:
      'The user’s games changed after the cursor (or at or after since; from the beginning without ' +
      'either), in change order, each once in its latest state; deleted games as tombstones. Follow ' +
      'nextCursor until hasMore is false; then poll with the last nextCursor. The feed signals changes: ' +
      'fetch a changed game with GET /api/v1/games/{id}. 400 for cursor together with since, an invalid ' +
      'since, a malformed, altered or foreign cursor, and a cursor from before the store was restored from ' +
      'an older backup. With wait, a request whose page would be empty waits up to that many seconds for a ' +
      'change of the user to commit (a long-poll), instead of polling.',
    query: changesQuery,
    ok: { description: 'One page of changes.', schema: schemas.changes },
    handler: async (request, reply, token) => {
      const { cursor, since, limit, wait } = request.query as ChangesQuery;
      // Cursors are bound to the reader as the API knows it: this user through this app's pairwise id.
      const reader = pairwiseId(secret, token.appSector, token.userId);
      let after = 0;
      if (cursor !== undefined && since !== undefined) {
        throw new ApiError(
          'invalid_request',
          'cursor and since cannot be combined: since starts a first run, cursor continues one',
        );
      }
      if (cursor !== undefined) {
        const position = decodeCursor(secret, reader, cursor);
        if (position === undefined) {
          throw new ApiError(
            'invalid_request',
            'cursor is not valid: pass the nextCursor of an earlier page, unchanged, with the same token',
          );
        }
        after = position;
      } else if (since !== undefined) {
        const sinceMs = parseZonedTimestamp(since);
        if (sinceMs === undefined) {
          throw new ApiError(
            'invalid_request',
            'since must be an ISO 8601 date and time with a zone, like 2026-11-21T06:13:00.000Z or ' +
              '2026-11-21T08:13:00+02:00 (write + as %2B in a URL)',
          );
        }
        after = await store.changePositionAt(token.userId, sinceMs);
      }
      const read = async () => {
        // One row beyond the page tells whether more exist; the page is one statement, one snapshot.
        const rows = await store.listChanges(token.userId, after, limit + 1);
        // A cursor past every change the store has made was issued before the store was restored from a
        // backup: the writes after the restore take the positions it has passed, and its reader would never
        // see them. Asked on an empty page only (a reader polling an idle feed), where it costs one lookup.
        if (rows.length === 0 && cursor !== undefined && after > (await store.lastSeq())) {
          throw new ApiError(
            'invalid_request',
            'cursor is ahead of the store, which was restored from an older backup: read the feed again ' +
              'from the start, without cursor',
          );
        }
        return rows;
      };
      // A long-poll reads until a page has changes, or its wait ends (feed-waits.ts): the one place a request
      // of the feed waits. The key names everything read() depends on, for waits that share a read.
      const key = `${token.userId} ${after} ${limit} ${cursor !== undefined}`;
      const rows =
        wait === undefined
          ? await read()
          : await waits.hold(token.userId, key, wait * 1000, reply, read, (found) => found.length > 0);
      const page = rows.slice(0, limit);
      const position = page.at(-1)?.seq ?? after;
      return {
        data: page.map(changeJson),
        nextCursor: encodeCursor(secret, reader, position),
        hasMore: rows.length > limit,
      };
    },
  });
}
