// Requests Node's HTTP parser rejects before Fastify sees them (a space in the URL, a control character or
// too many bytes in the headers, a client too slow to send its head or body: timeouts.ts) still get the API's
// error shape, a Date and an X-Request-Id like every other answer. Fastify's default answers these in its own
// shape. So do the two requests Node answers or drops itself, never handing them to Fastify: CONNECT, and an
// Expect other than 100-continue.
//
// Pipelined requests are answered in the order they came (RFC 9112 9.3.2): bytes that are not HTTP after
// complete requests on one connection get their 400 after those requests' answers, not in place of the
// first; Node's default wrote it at once, so a client read it as the answer to a good request. A request
// Node has handed to the routes before its body failed gets the 400 as its own answer instead.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ALLOW } from '../../api/route.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { REQUEST_ID_HEADER, requestId } from './request-id.ts';

const ANSWERS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time.'],
};
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'The request is not valid HTTP.'];

type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Sockets whose error answer is written or waits for the answers before it: one per connection. */
const refusing = new WeakSet<Socket>();

/**
 * Runs `then` once the answers Node still owes on this connection have gone out. Node answers pipelined
 * requests one after another: the one being answered is the socket's `_httpMessage`, and when it finishes
 * Node hands the socket to the next.
 */
function afterAnswers(socket: HttpSocket, then: () => void): void {
  const answering = socket._httpMessage;
  if (!answering || socket.destroyed) {
    then();
    return;
  }
  answering.once('finish', () => setImmediate(() => afterAnswers(socket, then)));
}

/** A whole answer in the error shape that closes the connection, as raw bytes. */
function closingAnswer(
  status: number,
  reason: string,
  error: ApiError,
  id: string,
  headers: Record<string, string> = {},
): string {
  const body = JSON.stringify(error.body());
  const fields = {
    [REQUEST_ID_HEADER]: id,
    ...headers,
    Date: new Date().toUTCString(),
    Connection: 'close',
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
  };
  const head = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${reason}\r\n${head.join('')}\r\n${body}`;
}

export function clientErrorHandler(error: Error & { code?: string }, socket: HttpSocket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Bytes after a request that closes the connection (Connection: close, or HTTP/1.0 without keep-alive):
  // that request is answered and nothing after it is processed (RFC 9112 9.6); Node closes after its answer.
  if (error.code === 'HPE_CLOSED_CONNECTION') return;
  // Past a timeout an answer under way (a GET is answered without waiting for a body it declared) is cut,
  // as Node does: nothing more is written into it. So is a connection whose error answer already waits for
  // the answers before it. Otherwise the 408 waits for them like any error answer (they are bounded by the
  // store's own timeouts, and the connection by IDLE_TIMEOUT).
  if (
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' &&
    (refusing.has(socket) || socket._httpMessage?.headersSent)
  ) {
    socket.destroy(error);
    return;
  }
  if (refusing.has(socket)) return; // the parser reports each chunk that arrives after its first error
  refusing.add(socket);
  const [status, reason, description] = ANSWERS[error.code ?? ''] ?? MALFORMED;
  // Node hands a request to the routes once its head is in. When its body then turns out malformed (a
  // Transfer-Encoding that does not end in chunked, a broken chunk) or too slow, the request itself is the
  // bad one: unless the routes have answered it already, its own answer is this refusal, in its turn
  // (answerRefusedRequests), not an answer of the routes with the refusal after it.
  const current = lastRequest.get(socket);
  if (current && !current.complete && !answered.has(current)) {
    refused.set(current, [status, description]);
    return;
  }
  afterAnswers(socket, () => {
    if (socket.writable) {
      const refusal = new ApiError('invalid_request', description);
      socket.write(closingAnswer(status, reason, refusal, randomUUID()));
    }
    socket.destroy(error);
  });
}

/** The last request Node handed to the routes on each connection. */
const lastRequest = new WeakMap<Socket, IncomingMessage>();
/** Requests whose answer from the routes has begun (onSend ran). */
const answered = new WeakSet<IncomingMessage>();
/** Requests whose body Node could not parse before the routes answered them: their status and description. */
const refused = new WeakMap<IncomingMessage, [number, string]>();

/** What a route's answer says about itself, dropped when a refusal takes its place. */
const REPLACED_HEADERS = [
  'etag',
  'content-disposition',
  'content-encoding',
  'content-length',
  'link',
  'x-total-count',
  'x-total-count-exceeds',
  'allow',
  'www-authenticate',
  'retry-after',
];

/**
 * Keeps track of the requests the routes answer, and gives a request whose body Node refused (above) the
 * refusal as its answer: in the error shape, with the headers the route set but its answer's own
 * (REPLACED_HEADERS), and Connection: close. Registered before the other onSend hooks, so none of them tags
 * or compresses it.
 */
export function answerRefusedRequests(app: FastifyInstance): void {
  app.server.on('request', (request: IncomingMessage) => lastRequest.set(request.socket, request));
  app.addHook('onSend', async (request, reply, payload) => {
    answered.add(request.raw);
    const refusal = refused.get(request.raw);
    if (!refusal) return payload;
    const [status, description] = refusal;
    if (payload instanceof Readable) payload.destroy();
    for (const name of REPLACED_HEADERS) reply.removeHeader(name);
    reply.code(status).header('connection', 'close').type('application/json; charset=utf-8');
    return JSON.stringify(new ApiError('invalid_request', description).body());
  });
}

/** CONNECT and unmet expectations, which never reach the routes. */
export function answerOutsideRoutes(server: Server): void {
  // CONNECT asks for a tunnel: the API has none (405 like every method but GET and HEAD). Node hands the
  // socket over and, without this listener, dropped the connection without a word, answers still due on it
  // included. It no longer parses the socket, so the connection ends with this answer.
  server.on('connect', (request: IncomingMessage, socket: HttpSocket) => {
    const refusal = new ApiError('method_not_allowed', `The API is read-only: use ${ALLOW}.`);
    const answer = closingAnswer(405, 'Method Not Allowed', refusal, requestId(request), { Allow: ALLOW });
    afterAnswers(socket, () => {
      if (!socket.writable) return;
      socket.write(answer);
      socket.destroySoon();
    });
  });
  // Only 100-continue is understood (Node sends the interim 100): any other expectation cannot be met, 417
  // (RFC 9110 10.1.1). Answered on the request's own response, so pipelining and keep-alive stay Node's.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const refusal = new ApiError(
      'invalid_request',
      'The Expect header asks for what the server cannot do: only 100-continue is understood.',
    );
    const body = JSON.stringify(refusal.body());
    response
      .writeHead(417, {
        [REQUEST_ID_HEADER]: requestId(request),
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      })
      .end(body);
  });
}
