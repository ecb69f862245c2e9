// Strict-Transport-Security (RFC 6797) when the server's public URL is https (PUBLIC_URL): a browser that has
// been here once goes to https by itself from then on, so that a network on the way cannot serve it the
// sign-in pages over plain http. On the answers a browser opens: every one outside /api/ (the OAuth and
// account pages, /docs, the OAuth endpoints, the probes); the API's answers go to programs, which ignore it.
// A year, the browsers' usual figure; this host only, without includeSubDomains or preload, which bind every
// name under the domain and are its owner's to decide (docs/oauth.md).
import type { FastifyInstance } from 'fastify';

export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000';

export function strictTransportSecurity(app: FastifyInstance): void {
  // On arrival: the OAuth endpoints' answers carry the headers set before the provider runs (oauth/index.ts).
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/api/'))
      reply.header('strict-transport-security', STRICT_TRANSPORT_SECURITY);
  });
}
