// The API reference page at /docs: Swagger UI from @fastify/swagger-ui, whose assets come from npm and are
// served by this process, so the page works without internet (and behind a firewall). Its Content Security
// Policy allows nothing but this origin: no CDN, no external fonts, no validator badge (validatorUrl null).
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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

export function docsPage(app: FastifyInstance): void {
  app.register(fastifySwaggerUi, {
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
  });
}
