// The API reference page at /docs: Swagger UI from @fastify/swagger-ui, whose assets come from npm and are
// served by this process, so the page works without internet (and behind a firewall). Its Content Security
// Policy allows nothing but this origin: no CDN, no external fonts, no validator badge (validatorUrl null).
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

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

export function docsPage(app: FastifyInstance): void {
  app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: CSP,
    validatorUrl: false,
    theme: { title: 'chessport API reference' },
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
