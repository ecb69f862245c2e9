// CORS for browser apps (@fastify/cors), on API paths only: any origin, never credentials (the token travels in the
// Authorization header, which the preflight allows explicitly). A real preflight (Origin and
// Access-Control-Request-Method present) is answered here, before authentication; any other OPTIONS
// request reaches the API's own OPTIONS answer with its Allow header.
import fastifyCors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Response headers a browser app may read. */
export const EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'X-Total-Count',
  'X-Total-Count-Exceeds',
  'Retry-After',
  'Content-Disposition',
  'X-Changes-Cursor',
  'WWW-Authenticate',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
];

/** Request headers a browser app may send (the OpenAPI document names them too: src/api/openapi). */
export const ALLOWED_HEADERS = ['Authorization', 'Accept', 'If-None-Match', 'X-Request-Id'];

const options = {
  origin: '*',
  credentials: false,
  methods: ['GET', 'HEAD'],
  allowedHeaders: ALLOWED_HEADERS,
  exposedHeaders: EXPOSED_HEADERS,
  // Chromium caps the preflight cache at 2 hours; longer values are ignored.
  maxAge: 7200,
  strictPreflight: false,
};

function isPreflight(request: FastifyRequest): boolean {
  return (
    request.method === 'OPTIONS' &&
    request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined
  );
}

/**
 * The API, its OpenAPI document included, is for browser apps on any origin. The probes, /metrics and the
 * docs page are not: a web page must not read them from a browser inside the operator's network (/metrics
 * shows the store-wide change sequence, which feed cursors keep from users).
 */
function isApiPath(request: FastifyRequest): boolean {
  return request.url.startsWith('/api/');
}

export function cors(app: FastifyInstance): void {
  app.register(fastifyCors, {
    delegator: (request, callback) =>
      callback(
        null,
        isApiPath(request) ? { ...options, preflight: isPreflight(request) } : { origin: false },
      ),
  });
}
