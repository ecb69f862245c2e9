// X-Request-Id: a caller's id is kept when it is sane (so one id follows a call across services), otherwise
// one is generated; it is echoed on every answer and Fastify puts it on every log line of the request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { maskTokens } from './logging.ts';

export const REQUEST_ID_HEADER = 'x-request-id';

// Printable, no separators or spaces: safe to echo in a header and to write into a log line.
const SANE = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Fastify's genReqId: the caller's X-Request-Id when sane, else a fresh UUID. A token is sane by these
 * characters (`cp_` and base64url) but would go into every log line of the request: one that holds
 * anything the logs mask is replaced too.
 */
export function requestId(raw: IncomingMessage): string {
  const given = raw.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE.test(given) && maskTokens(given) === given ? given : randomUUID();
}

export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
}
