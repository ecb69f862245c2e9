// Conditional requests (RFC 9110 8.8.3, 13.1.2): every 200 answer to an authenticated GET or HEAD carries a
// strong ETag, and a matching If-None-Match gets 304 with no body.
//
// The tag hashes the representation: its media type, Content-Disposition and Link header (a new page
// behind the last one changes `rel="next"` but not the body), X-Total-Count (or X-Total-Count-Exceeds) where
// a list has it, and the body, before compression. The
// negotiated content coding is appended (`"…-gzip"`), so each coding has its own strong validator; the
// comparison ignores that suffix, as If-None-Match compares weakly anyway.
//
// The database PGN export is a stream too large to hash: its tag is computed before the handler runs, from a
// version stamp the store reads without reading the games (`store.databases.version`,
// src/store/databases.ts). On a match the stream, which has not been read yet, is dropped. That stamp is a
// value of the change sequence, which every user's writes advance, so its tag is an HMAC under the server
// secret: a plain hash of it, with the database's id, slug and updatedAt that /databases shows, gave the
// sequence away to a search of a few million hashes, and with it how many writes other users made between two
// writes to the database (as v1 cursors did).
//
// Which 304s give their rate-limit count back (rate-limit.ts, docs/api.md "Rate limits"): those whose tag
// the request named and the server had without reading the representation (`cheapTag`: the export's
// version stamp, a list page kept in the page cache). `If-None-Match: *` matches every representation, so
// its 304 is had for nothing; any other 304 cost the server the read and the hash of a 200.
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { negotiatedCoding } from '../../platform/http/compression.ts';
import type { Store } from '../../store/index.ts';
import { totalTag } from '../params.ts';
import { answerFormat } from '../pgn.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The representation's tag when the handler streams it and it cannot be hashed on the way out. */
    representationTag: string | undefined;
    /**
     * Whether representationTag was had without reading the representation (a version stamp, a page kept in
     * the page cache): a 304 on it costs the server little.
     */
    cheapTag: boolean;
  }
}

const DATABASE_GAMES = '/api/v1/databases/:id/games';
const USER_GAMES = '/api/v1/games';

/** The parameters that narrow an export (its filters), in one order: none for a whole export. */
function filterParts(request: FastifyRequest): string[] {
  const query = request.query as Record<string, unknown>;
  return Object.keys(query)
    .filter((name) => name !== 'format' && name !== 'gameIds' && name !== 'limit' && name !== 'offset')
    .sort()
    .map((name) => `${name}=${String(query[name])}`);
}

function digest(parts: (string | Buffer)[], hash: Hash | Hmac = createHash('sha256')): string {
  for (const part of parts) hash.update(part).update('\n');
  return hash.digest('base64url').slice(0, 32);
}

/**
 * The strong tag of a body sent with this Content-Type, Content-Disposition, Link and list total (params.ts
 * totalTag; empty when absent): what the onSend hook computes when the handler has not named the tag itself.
 */
export function bodyTag(
  contentType: string,
  disposition: string,
  link: string,
  total: string,
  body: Buffer,
): string {
  // Without a total the parts are those of the answers before lists had one: their tags stay.
  return digest([contentType, disposition, link, ...(total ? [`total ${total}`] : []), body]);
}

function headerText(reply: FastifyReply, name: string): string {
  const value = reply.getHeader(name);
  return Array.isArray(value) ? value.join(', ') : String(value ?? '');
}

/** True when If-None-Match names this representation (any coding of it), or is `*`. */
export function matchesIfNoneMatch(header: string | undefined, tag: string): boolean {
  return namesTag(header, tag) || (header ?? '').split(',').some((value) => value.trim() === '*');
}

/** True when If-None-Match names this representation's tag (any coding of it); `*` names none. */
function namesTag(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  for (const candidate of header.split(',')) {
    const value = candidate.trim();
    const opaque = /^(?:W\/)?"([^"]*)"$/.exec(value)?.[1];
    if (opaque === undefined) continue;
    // A tag is base64url and may itself end in "-br" (1 in 262,144): compared as it is first.
    if (opaque === tag || opaque.replace(/-(?:gzip|br)$/, '') === tag) return true;
  }
  return false;
}

/**
 * Whether a streamed answer (the PGN export) will be 304 Not Modified: its tag, computed before the handler,
 * matches If-None-Match. Its stream is then never read, and takes no slot of the heavy requests.
 */
export function willBeNotModified(request: FastifyRequest): boolean {
  const tag = request.representationTag;
  return tag !== undefined && matchesIfNoneMatch(request.headers['if-none-match'], tag);
}

/**
 * Whether a 304 may give its rate-limit count back: the client named the tag the server had without reading
 * the representation. Not for `If-None-Match: *`, which needs no tag, nor for a tag that took reading and
 * hashing the page (the expanded feed: 500 games), which costs the server as much as the 200.
 */
export function isCheapNotModified(request: FastifyRequest): boolean {
  const tag = request.representationTag;
  return request.cheapTag && tag !== undefined && namesTag(request.headers['if-none-match'], tag);
}

function isStream(payload: unknown): payload is Readable {
  return payload instanceof Readable;
}

export function conditionalRequests(app: FastifyInstance, store: Store, secret: string): void {
  app.decorateRequest('representationTag', undefined);
  app.decorateRequest('cheapTag', false);

  const exportTag = (parts: string[]) =>
    digest(parts, createHmac('sha256', secret).update('chessport etag\0'));

  app.addHook('preHandler', async (request) => {
    const url = request.routeOptions.url;
    if ((url !== DATABASE_GAMES && url !== USER_GAMES) || !request.token) return;
    const format = answerFormat(request);
    if (format === 'json') return;
    // NDJSON and a filtered export are other representations; the PGN file keeps the tag it always had.
    const variant = [...(format === 'ndjson' ? ['ndjson'] : []), ...filterParts(request)];
    if (url === USER_GAMES) {
      const version = await store.games.version(request.token.userId);
      request.cheapTag = true;
      request.representationTag = exportTag([
        'games-export/1',
        request.token.userId,
        String(version),
        ...variant,
      ]);
      return;
    }
    const { id } = request.params as { id: string };
    const database = await store.databases.find(request.token.userId, id);
    if (!database) return; // the handler answers 404
    const version = await store.databases.version(database.id);
    // With the games' ids it is another representation (and without them the tag it always had).
    const { gameIds } = request.query as { gameIds?: boolean };
    request.cheapTag = true;
    request.representationTag = exportTag([
      'pgn-export/3',
      database.id,
      database.slug,
      String(database.updatedAt),
      String(version),
      ...(gameIds ? ['game ids'] : []),
      ...variant,
    ]);
  });

  // Runs before @fastify/compress's onSend (route-level hooks come after instance hooks): on the
  // uncompressed body.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 200 || !request.token) return payload;
    if (request.method !== 'GET' && request.method !== 'HEAD') return payload;
    const contentType = headerText(reply, 'content-type');
    let body = payload;
    let tag = request.representationTag;
    if (tag === undefined) {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
      // Encoded once: the same bytes are hashed, compressed and written.
      const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
      tag = bodyTag(
        contentType,
        headerText(reply, 'content-disposition'),
        headerText(reply, 'link'),
        totalTag(headerText(reply, 'x-total-count'), headerText(reply, 'x-total-count-exceeds')),
        bytes,
      );
      body = bytes;
    }
    const coding = negotiatedCoding(request, contentType);
    reply.header('etag', `"${tag}${coding ? `-${coding}` : ''}"`);
    const notModified = matchesIfNoneMatch(request.headers['if-none-match'], tag);
    if (notModified) {
      reply.code(304);
      // The client's copy keeps the feed cursor it came with (X-Changes-Cursor), which stays valid.
      for (const name of ['content-type', 'content-length', 'content-disposition', 'x-changes-cursor'])
        reply.removeHeader(name);
    }
    if (!notModified && request.method === 'GET') return body;
    // No body follows: a stream not read yet is dropped rather than drained (a HEAD of the PGN export
    // would otherwise read every game). Fastify's HEAD answer wants a payload it can drain, and an empty
    // stream adds no Content-Length, which a 304 must not carry and a streamed GET would not have.
    if (isStream(body)) body.destroy();
    if (request.method === 'HEAD') return isStream(body) || notModified ? Readable.from([]) : body;
    return null;
  });
}
