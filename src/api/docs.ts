// The API reference page at /docs: Swagger UI from @fastify/swagger-ui, whose assets come from npm and are
// served by this process, so the page works without internet (and behind a firewall). Its Content Security
// Policy allows nothing but this origin: no CDN, no external fonts, no validator badge (validatorUrl null).
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import fastifySwaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KEPT_ENCODERS, negotiatedCoding } from '../platform/http/compression.ts';

export const DOCS_PATH = '/docs';

// Swagger UI sets style attributes from script, hence 'unsafe-inline' for styles only; images it embeds
// are data: URLs.
const CSP = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
};

const INDEX = `${DOCS_PATH}/static/index.html`;

/**
 * The plugin redirects its static index.html to the page by rewriting the URL, which misses when a query
 * follows (`index.html?x=1` redirected to itself): the page is at one place, whatever the query.
 */
async function redirectIndex(request: FastifyRequest, reply: FastifyReply) {
  if (request.routeOptions.url === INDEX) return reply.redirect(`${DOCS_PATH}/`);
}

/** What the page's files are that compression shrinks: scripts, styles, HTML, JSON, SVG. */
const PAGE_FILES = /^(?:application\/(?:javascript|json)|text\/|image\/svg\+xml)/;

/**
 * The page's static files compressed once per file and coding, kept in memory (about 0.6 MB for the five
 * compressible ones, both codings), rather than by @fastify/compress on every request: Swagger UI's
 * bundle is 1.7 MB, which took 33 ms of CPU per request at the live answers' brotli quality, for anyone,
 * without a token. Once, the highest useful levels cost little: br 9 (387 KB, 0.13 s), gzip 9 (449 KB).
 * Setting Content-Encoding here makes @fastify/compress, whose route hook runs after, leave it alone.
 */
function fileName(url: string): string | undefined {
  try {
    return decodeURIComponent(url.split('?')[0] as string);
  } catch {
    return undefined;
  }
}

function compressOnce(docs: FastifyInstance): void {
  const cache = new Map<string, Promise<Buffer>>();
  docs.addHook('onSend', async (request, reply, payload) => {
    if (!(payload instanceof Readable) || reply.statusCode !== 200) return payload;
    const coding = negotiatedCoding(request, String(reply.getHeader('content-type') ?? ''), PAGE_FILES);
    if (!coding) return payload;
    // The file's name, decoded: `%73wagger-ui-bundle.js` is the same file, and a key per spelling would let
    // anyone fill the memory with copies. (A 200 from the file server is a file of the page's folder, whose
    // names are few: dot segments and doubled slashes are 404 there.)
    const path = fileName(request.url);
    if (path === undefined) return payload;
    const key = `${coding} ${path}`;
    let compressed = cache.get(key);
    if (!compressed) {
      compressed = buffer(payload).then((bytes) =>
        coding === 'br' ? KEPT_ENCODERS.br(bytes, 9) : KEPT_ENCODERS.gzip(bytes),
      );
      cache.set(key, compressed);
      // A failed read is not kept: the next request tries again.
      compressed.catch(() => cache.delete(key));
    } else payload.destroy();
    const body = await compressed;
    const vary = reply.getHeader('vary');
    reply.headers({
      'content-encoding': coding,
      'content-length': body.length,
      vary: vary ? `${String(vary)}, accept-encoding` : 'accept-encoding',
    });
    return body;
  });
}

export function docsPage(app: FastifyInstance): void {
  app.register(async (docs) => {
    compressOnce(docs);
    docs.register(fastifySwaggerUi, swaggerUiOptions);
  });
}

const swaggerUiOptions: FastifySwaggerUiOptions = {
  routePrefix: DOCS_PATH,
  staticCSP: CSP,
  validatorUrl: false,
  theme: { title: 'chessport API reference' },
  uiHooks: { onRequest: redirectIndex },
  uiConfig: {
    // Without the top bar (an "Explore" box for other documents' URLs): this page documents this API.
    layout: 'BaseLayout',
    docExpansion: 'list',
    defaultModelsExpandDepth: 1,
    displayOperationId: false,
    tryItOutEnabled: false,
  },
};
