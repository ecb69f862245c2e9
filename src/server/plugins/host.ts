// RFC 9112 3.2: a request is 400 when it is HTTP/1.1 without a Host header, or when it has more than one Host
// line or one whose value is not a host. Node refuses a missing Host itself with an empty 400 and no request
// id; here it gets the API's error shape and X-Request-Id like every other answer (Node's check is off:
// timeouts.ts). Node checks nothing else: it kept the first of two Host lines, and any bytes in one.
// HTTP/1.0 needs no Host.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';

// RFC 3986 3.2.2 and 3.2.3: an IP literal in brackets, or a reg-name (IPv4 addresses and DNS names are
// reg-names: unreserved, sub-delims, percent-encoded; empty too), then an optional port.
const HOST =
  /^(?:\[[0-9A-Za-z._~!$&'()*+,;=:-]+\]|(?:[0-9A-Za-z._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

export function requireHost(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const { httpVersionMajor, httpVersionMinor, rawHeaders } = request.raw;
    let lines = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      if (rawHeaders[i]?.toLowerCase() === 'host') lines++;
    }
    const host = request.headers.host;
    let problem: string | undefined;
    if (lines > 1) problem = 'The request has more than one Host header.';
    else if (host !== undefined && !HOST.test(host)) problem = 'The Host header is not a host and port.';
    else if (host === undefined && (httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor > 0)))
      problem = 'The request has no Host header.';
    if (!problem) return;
    // Closed after the answer, as Node did: a client this confused may not frame its next request either.
    reply.header('connection', 'close');
    throw new ApiError('invalid_request', problem);
  });
}
