// How long a client may take to send its request. Fastify's default (requestTimeout 0) lifts Node's limit,
// so a client that declared a body and sent a byte every few seconds held its connection for as long as it
// liked. The API reads no body and a request head is at most 16 KiB: a request that is not in after the
// timeout is a slow client, answered 408 in the error shape (plugins/client-errors.ts) and disconnected.
import type { ServerOptions } from 'node:http';

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * A connection on which no bytes move for this long is closed (Node's socket inactivity timeout, Fastify's
 * connectionTimeout). Without it, an answer whose client stopped reading was held for good: a stalled PGN
 * export keeps ~2 MB, and 200 of them kept 370 MB. Nothing the server does waits this long (a store query
 * gives up after PG_ANSWER_TIMEOUT, 30 s), and a slow reader that reads at all keeps its connection.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/** Node's server options for this timeout; Fastify's own requestTimeout must be set to the same value. */
export function timeoutOptions(requestTimeoutMs: number): ServerOptions {
  return {
    requestTimeout: requestTimeoutMs,
    // The head has the same time as the whole request (Node's default, 60 s, may not exceed it).
    headersTimeout: requestTimeoutMs,
    // Node checks the timeouts on this interval (30 s by default, which doubled a 30 s timeout).
    connectionsCheckingInterval: Math.min(5000, Math.ceil(requestTimeoutMs / 2)),
    // Node's own refusal of an HTTP/1.1 request without Host is a bare 400: plugins/host.ts answers it.
    requireHostHeader: false,
  };
}
