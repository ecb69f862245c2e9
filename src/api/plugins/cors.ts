// CORS for browser apps (@fastify/cors): any origin, never credentials (the token travels in the
// Authorization header, which the preflight allows explicitly). A real preflight (Origin and
// Access-Control-Request-Method present) is answered here, before authentication; any other OPTIONS
// request reaches the API's own OPTIONS answer with its Allow header.
import fastifyCors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Response headers a browser app may read. */
export const EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'Retry-After',
  'Content-Disposition',
  'WWW-Authenticate',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
];

const options = {
  origin: '*',
  credentials: false,
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['Authorization', 'Accept', 'If-None-Match', 'X-Request-Id'],
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

export function cors(app: FastifyInstance): void {
  app.register(fastifyCors, {
    delegator: (request, callback) => callback(null, { ...options, preflight: isPreflight(request) }),
  });
}
