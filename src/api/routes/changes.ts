// GET /changes: the feed of the user's changed games, oldest change first (docs/design.md 18-22).
import type { FastifyInstance } from 'fastify';
import { decodeCursor, encodeCursor } from '../../domain/cursor.ts';
import { pairwiseId } from '../../domain/pairwise.ts';
import { ApiError } from '../../platform/http/errors.ts';
import type { GameChange } from '../../store/index.ts';
import { lapsedToken, type TokenLapse, tokenLapse } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { readRoute } from '../route.ts';
import { changesQuery, schemas } from '../schemas.ts';
import { changeJson, expandedChangeJson } from '../serialize.ts';
import { parseZonedTimestamp, zonedTimestampRule } from '../timestamp.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

interface ChangesQuery {
  cursor?: string;
  since?: string;
  limit: number;
  wait?: number;
  expand?: 'game';
}

export function changeRoutes(app: FastifyInstance, context: ApiContext): void {
  const { store, secret, waits } = context;
  /**
   * The token checks under way, by token, each with the tick at which it began. The waits of one token woken
   * by one change (a client's devices; a thousand in the tests) check it once: a request joins a check only
   * if that began after its own read, so a revocation that committed before its read is never missed.
   */
  const lapseChecks = new Map<string, { began: number; result: Promise<TokenLapse | undefined> }>();
  let ticks = 0;
  const checkLapse = (
    token: Parameters<typeof tokenLapse>[2],
    request: Parameters<typeof tokenLapse>[1],
    readAt: number,
  ) => {
    const current = lapseChecks.get(token.id);
    if (current && current.began > readAt) return current.result;
    const entry = { began: ++ticks, result: tokenLapse(store, request, token) };
    lapseChecks.set(token.id, entry);
    const done = () => {
      if (lapseChecks.get(token.id) === entry) lapseChecks.delete(token.id);
    };
    entry.result.then(done, done);
    return entry.result;
  };

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
      'fetch a changed game with GET /api/v1/games/{id}, or ask for every page’s games with it ' +
      '(expand=game). 400 for cursor together with since, an invalid ' +
      'since, a malformed, altered or foreign cursor, and a cursor from before the store was restored from ' +
      'an older backup. With wait, a request whose page would be empty waits up to that many seconds for a ' +
      'change of the user to commit (a long-poll), instead of polling.',
    query: changesQuery,
    ok: { description: 'One page of changes.', schema: schemas.changes },
    handler: async (request, reply, token) => {
      const { cursor, since, limit, expand, wait } = request.query as ChangesQuery;
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
        // Checked by the schema's format already (src/server/app.ts): a second look costs nothing.
        if (sinceMs === undefined) throw new ApiError('invalid_request', zonedTimestampRule('since'));
        after = await store.feed.positionAt(token.userId, sinceMs);
      }
      // A heavy request (docs/api.md "Heavy requests"): a long-poll holds a slot of the app and user's while it
      // waits, an expanded page while it is read and sent. A HEAD holds one too: it sends no body, but waits
      // and reads the page as a GET does (its tag is the body's), so without a slot it would dodge the limit.
      if (wait !== undefined) await context.heavy.hold(request, reply, 'long-poll');
      else if (expand) await context.heavy.hold(request, reply, 'expanded-feed');
      const read = async () => {
        // One row beyond the page tells whether more exist; the page is one statement, one snapshot, also
        // with its games' details.
        // A long-poll's empty page is read on the primary where the API reads from replicas: its wait must
        // start from, and its wake-ups read, every commit signalled (docs/architecture.md).
        const longPoll = wait !== undefined;
        const page = expand
          ? items(
              await store.feed.expandedChanges(token.userId, after, limit + 1, longPoll),
              limit,
              expandedChangeJson,
            )
          : items(await store.feed.changes(token.userId, after, limit + 1, longPoll), limit, changeJson);
        // A cursor past every change the store has made was issued before the store was restored from a
        // backup: the writes after the restore take the positions it has passed, and its reader would never
        // see them. Asked on an empty page only (a reader polling an idle feed), where it costs one lookup.
        if (
          page.rows.length === 0 &&
          cursor !== undefined &&
          (await store.feed.isAhead(token.userId, after))
        ) {
          throw new ApiError(
            'invalid_request',
            'cursor is ahead of the store, which was restored from an older backup: read the feed again ' +
              'from the start, without cursor',
          );
        }
        // The tick at which it was read: a token check that begins later sees every revocation it could miss.
        return { ...page, readAt: ticks };
      };
      // A long-poll reads until a page has changes, or its wait ends (feed-waits.ts): the one place a request
      // of the feed waits. The key names everything read() depends on, for waits that share a read.
      const key = `${token.userId} ${after} ${limit} ${cursor !== undefined} ${expand ?? ''}`;
      const { rows, data, readAt } =
        wait === undefined
          ? await read()
          : await waits.hold(token.userId, key, wait * 1000, reply, read, (page) => page.rows.length > 0);
      // A wait outlives the moment its token was checked, by up to a minute: a token revoked or expired
      // meanwhile gets its 401, not the changes (and games) read after it lapsed, as a long export is cut off
      // (long-answers.ts).
      if (wait !== undefined) {
        const lapse = await checkLapse(token, request, readAt);
        if (lapse) throw lapsedToken(lapse, context.resourceMetadataUrl());
      }
      const position = rows.slice(0, limit).at(-1)?.seq ?? after;
      const body = {
        data,
        nextCursor: encodeCursor(secret, reader, position),
        hasMore: rows.length > limit,
      };
      // The route's compiled serialiser would check every game against GameDetail (Ajv, formats included)
      // to pick a branch of the nullable game's anyOf; the objects are built field by field
      // (serialize.ts), so JSON.stringify gives the same bytes in about half the time
      // (docs/performance.md).
      if (expand) return reply.type(JSON_TYPE).send(JSON.stringify(body));
      return body;
    },
  });
}

/** The rows read (one beyond the page) and the page's items as JSON. */
function items<T extends GameChange>(rows: T[], limit: number, json: (row: T) => unknown) {
  return { rows, data: rows.slice(0, limit).map(json) };
}
