// Negotiated response compression (br, gzip) with @fastify/compress, the streamed PGN export included, and
// HEAD answers with the same Content-Encoding and length.
// Brotli runs at quality 4: 11 (zlib's default) costs far more CPU than the bytes it saves on a live answer.
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const CODINGS: ('br' | 'gzip')[] = ['br', 'gzip'];
const COMPRESSIBLE = /^(?:application\/(?:json|x-ndjson|x-chess-pgn|vnd\.chess-pgn)|text\/)/;
const THRESHOLD = 1024;
// JSON answers (up to a few hundred KB for a 500-item feed page) are compressed in one synchronous
// call: cheaper than setting up a zlib stream on the thread pool, which the plugin would otherwise do
// above 8 KB on a 2-core machine and which halved the requests/s of a gzip'd 50-game list.
const SYNC_THRESHOLD = 512 * 1024;
const BROTLI_OPTIONS = {
  params: {
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_QUALITY]: 4,
  },
};
// Level 1: on API JSON nearly level 6's size for far less CPU, and the gzip'd PGN export streams faster
// (docs/performance.md, "gzip level 1").
const ZLIB_OPTIONS = { level: 1 };

export function compression(app: FastifyInstance): void {
  // @fastify/compress negotiates by itself, and sent a coding the client refused (preferredCoding): it is
  // handed the coding chosen here instead, `identity` for none.
  app.addHook('onRequest', async (request) => {
    const accept = request.raw.headers['accept-encoding'];
    if (accept !== undefined) request.raw.headers['accept-encoding'] = preferredCoding(accept) ?? 'identity';
  });
  app.register(fastifyCompress, {
    global: true,
    encodings: CODINGS,
    threshold: THRESHOLD,
    syncThreshold: SYNC_THRESHOLD,
    customTypes: COMPRESSIBLE,
    brotliOptions: BROTLI_OPTIONS,
    zlibOptions: ZLIB_OPTIONS,
  });
}

/**
 * HEAD answers with the header fields GET would send (RFC 9110 9.3.2): @fastify/compress leaves HEAD alone,
 * so a HEAD that GET would compress lacked Content-Encoding and gave the identity length. Here the body is
 * encoded as GET's is (the same options, so the same length) and dropped by Fastify; a body GET would
 * stream (a stream, or one above the synchronous threshold) gets Content-Encoding and no length, as GET.
 * Added after the ETag hook (conditional.ts), which leaves a HEAD's body or an empty stream.
 */
export function headLikeGet(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    // The API's read routes (a token was found), as for ETags: other routes' GET is not compressed alike
    // (the OpenAPI document is sent as it is).
    if (
      payload == null ||
      request.method !== 'HEAD' ||
      !request.token ||
      reply.statusCode === 304 ||
      reply.hasHeader('content-encoding')
    ) {
      return payload;
    }
    const coding = negotiatedCoding(request, String(reply.getHeader('content-type') ?? ''));
    if (!coding) return payload;
    const streamed = payload instanceof Readable;
    const bytes = streamed ? undefined : Buffer.from(payload as string | Buffer);
    if (bytes && bytes.length < THRESHOLD) return payload;
    const vary = String(reply.getHeader('vary') ?? '');
    if (!/\baccept-encoding\b/i.test(vary))
      reply.header('vary', vary ? `${vary}, accept-encoding` : 'accept-encoding');
    reply.header('content-encoding', coding);
    if (!bytes || bytes.length > SYNC_THRESHOLD) {
      reply.removeHeader('content-length');
      if (bytes) return Readable.from([]);
      return payload;
    }
    return coding === 'br' ? brotliCompressSync(bytes, BROTLI_OPTIONS) : gzipSync(bytes, ZLIB_OPTIONS);
  });
}

/**
 * The content coding for this request and media type, or undefined for identity. The ETag carries it, so
 * that each coding of an answer has its own strong validator (RFC 9110 8.8.3). The request's Accept-Encoding
 * is already the one coding chosen (preferredCoding), which is what @fastify/compress then applies.
 */
export function negotiatedCoding(
  request: FastifyRequest,
  contentType: string,
  compressible = COMPRESSIBLE,
): 'br' | 'gzip' | undefined {
  const accept = request.headers['accept-encoding'];
  if (!accept || request.headers['x-no-compression'] !== undefined || !compressible.test(contentType)) {
    return undefined;
  }
  return preferredCoding(accept);
}

/**
 * The coding an Accept-Encoding asks for most (RFC 9110 12.5.3), br before gzip when it weighs both alike,
 * or undefined for identity. A coding named has its own weight, and q=0 refuses it; x-gzip is gzip. `*` gives
 * its weight to gzip when gzip is not named (as @fastify/compress reads it, for older clients), never to a
 * coding named: @fastify/compress turned `*` into gzip before weighing, so `gzip;q=0, *` got gzip.
 */
export function preferredCoding(accept: string): 'br' | 'gzip' | undefined {
  const weights = new Map<string, number>();
  for (const member of accept.split(',')) {
    const [name = '', ...params] = member.split(';');
    const coding = name
      .trim()
      .toLowerCase()
      .replace(/^x-gzip$/, 'gzip');
    if (!coding) continue;
    const q = params.map((param) => param.trim().toLowerCase()).find((param) => param.startsWith('q='));
    const weight = q === undefined ? 1 : Number.parseFloat(q.slice(2)) || 0;
    weights.set(coding, Math.max(weight, weights.get(coding) ?? 0));
  }
  const weightOf = (coding: 'br' | 'gzip') =>
    weights.get(coding) ?? (coding === 'gzip' ? (weights.get('*') ?? 0) : 0);
  let best: 'br' | 'gzip' | undefined;
  for (const coding of CODINGS) {
    if (weightOf(coding) > (best ? weightOf(best) : 0)) best = coding;
  }
  return best;
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Encoders for bodies compressed once and kept (the OpenAPI document, the docs page's files), on the thread
 * pool: there the highest levels pay, where live answers use quality 4 and level 1. Brotli's quality is the
 * caller's, as 11 takes seconds on a large file (Swagger UI's 1.7 MB bundle: 3 s, against 0.13 s at 9).
 */
export const KEPT_ENCODERS = {
  br: (bytes: Buffer, quality: number = constants.BROTLI_MAX_QUALITY) =>
    brotliAsync(bytes, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: quality,
      },
    }),
  gzip: (bytes: Buffer) => gzipAsync(bytes, { level: constants.Z_BEST_COMPRESSION }),
};
