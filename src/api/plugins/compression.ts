// Negotiated response compression (br, gzip) with @fastify/compress, the streamed PGN export included.
// Brotli runs at quality 4: 11 (zlib's default) costs far more CPU than the bytes it saves on a live answer.
import { constants } from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const CODINGS: ('br' | 'gzip')[] = ['br', 'gzip'];
const COMPRESSIBLE = /^(?:application\/(?:json|x-chess-pgn|vnd\.chess-pgn)|text\/)/;

export function compression(app: FastifyInstance): void {
  app.register(fastifyCompress, {
    global: true,
    encodings: CODINGS,
    threshold: 1024,
    // JSON answers (up to a few hundred KB for a 500-item feed page) are compressed in one synchronous
    // call: cheaper than setting up a zlib stream on the thread pool, which the plugin would otherwise do
    // above 8 KB on a 2-core machine and which halved the requests/s of a gzip'd 50-game list.
    syncThreshold: 512 * 1024,
    customTypes: COMPRESSIBLE,
    brotliOptions: {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: 4,
      },
    },
    // Level 1: on API JSON within 3 % of level 6's size for about half the CPU; the gzip'd PGN export streams
    // about 50,000 games/s instead of 31,000 (bench/http.ts, 2 cores).
    zlibOptions: { level: 1 },
  });
}

/**
 * The content coding @fastify/compress picks for this request and media type (the same negotiation:
 * `*` and x-gzip count as gzip, x-no-compression turns it off), or undefined for identity. The ETag
 * carries it, so that each coding of an answer has its own strong validator (RFC 9110 8.8.3).
 */
export function negotiatedCoding(request: FastifyRequest, contentType: string): 'br' | 'gzip' | undefined {
  const accept = request.headers['accept-encoding'];
  if (!accept || request.headers['x-no-compression'] !== undefined || !COMPRESSIBLE.test(contentType)) {
    return undefined;
  }
  return negotiate(accept.toLowerCase().replace(/\*|x-gzip/g, 'gzip'), CODINGS) ?? undefined;
}
