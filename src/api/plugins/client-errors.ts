// Requests Node's HTTP parser rejects before Fastify sees them (a space in the URL, a control character or
// too many bytes in the headers, a client too slow to send its head or body: timeouts.ts) still get the API's error shape, and an
// X-Request-Id like every other answer. Fastify's default answers these in its own shape.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';

const ANSWERS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time.'],
};
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'The request is not valid HTTP.'];

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, description] = ANSWERS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify(new ApiError('invalid_request', description).body());
  // Past a timeout the answer may already be under way (a GET is answered without waiting for a body it
  // declared): like Node, nothing more is written into it.
  const answering = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (socket.writable && !answering?.headersSent) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\n${REQUEST_ID_HEADER}: ${randomUUID()}\r\nConnection: close\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
