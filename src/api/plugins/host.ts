// RFC 9112 3.2: an HTTP/1.1 request without a Host header is 400. Node refuses it itself with an empty 400
// and no request id; here it gets the API's error shape and X-Request-Id like every other answer
// (Node's check is off: timeouts.ts). HTTP/1.0 needs no Host.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

export function requireHost(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const { httpVersionMajor, httpVersionMinor } = request.raw;
    if (
      request.headers.host !== undefined ||
      httpVersionMajor < 1 ||
      (httpVersionMajor === 1 && httpVersionMinor === 0)
    )
      return;
    // Closed after the answer, as Node did: a client this confused may not frame its next request either.
    reply.header('connection', 'close');
    throw new ApiError('invalid_request', 'The request has no Host header.');
  });
}
