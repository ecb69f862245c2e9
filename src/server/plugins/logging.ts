// Structured pino logs that never carry a credential: Authorization headers and cookies are redacted
// wherever they appear, and anything token-shaped in a URL (a client that put its token in the query, a
// device flow's user code) is masked, also when it is percent-encoded, as the server decodes it. The URL is
// logged as sent, never decoded.
import { writeSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { isWaiting } from '../../api/feed-waits.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { requestMetrics } from '../../platform/metrics.ts';

/**
 * A literal as it may stand in a URL: each character as itself or percent-encoded (`cp%5F`, `%63p_`), in
 * either case of letter and hex digit (the pattern is case-insensitive).
 */
function encodable(literal: string): string {
  return [...literal]
    .map((c) => {
      const codes = new Set([c.toLowerCase(), c.toUpperCase()].map((v) => v.charCodeAt(0).toString(16)));
      return `(?:${c}|${[...codes].map((code) => `%${code}`).join('|')})`;
    })
    .join('');
}

// A token's characters, or any percent-escape: an encoded token is masked whole (masking a little more is
// harmless).
const TOKEN_BODY = '(?:[A-Za-z0-9_~.+/=-]|%[0-9A-Fa-f]{2})+';
// Also the OAuth parameters that are credentials, should they come in a URL: a device flow's user code
// (verification_uri_complete), a code.
const TOKEN_IN_URL = new RegExp(
  `${encodable('cp_')}${TOKEN_BODY}|((?:(?:${encodable('access_')}|${encodable('refresh_')})?${encodable('token')}|(?:${encodable('user_')})?${encodable('code')})=)[^&#]*`,
  'gi',
);

export function maskTokens(text: string): string {
  return text.replace(TOKEN_IN_URL, (_match, param?: string) =>
    param ? `${param}[redacted]` : 'cp_[redacted]',
  );
}

/** What a request log line says about the request; Fastify passes its request object here. */
interface LoggedRequest {
  method?: string;
  url?: string;
  /** The target as sent, when rewriteUrl changed it (request-target.ts). */
  originalUrl?: string;
  ip?: string;
}

/** Where the log lines go: one JSON line per write. */
export interface LogStream {
  write(line: string): void;
}

/** Lines dropped since the last one written (stdoutLines). */
let dropped = 0;

/**
 * The default log stream: stdout, one synchronous write per line, like pino's default destination. But a
 * broken pipe (whoever read stdout has gone) drops the line: the default (sonic-boom) retries such a write
 * forever from its exit hook, so a server whose log reader had gone could never stop on SIGTERM. A reader
 * that does not read for a second (a non-blocking stdout that stays full) costs the lines written meanwhile,
 * never the server: a write that threw would end the process from whatever logged (an answer closing). The
 * next line that gets through says how many were dropped.
 */
export const stdoutLines: LogStream = {
  write(line: string): void {
    for (let attempt = 0; ; attempt++) {
      try {
        if (dropped > 0) {
          writeSync(
            1,
            `${JSON.stringify({ level: 40, time: Date.now(), msg: `${dropped} log lines dropped: stdout was full for over a second` })}\n`,
          );
          dropped = 0;
        }
        writeSync(1, line);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') return;
        if (code !== 'EAGAIN') throw error;
        // A non-blocking stdout that is full: wait 1 ms and retry, for at most a second (not again while it
        // stays full).
        if (attempt >= (dropped > 0 ? 0 : 1000)) {
          dropped++;
          return;
        }
        Atomics.wait(PAUSE, 0, 0, 1);
      }
    }
  },
};
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

export function loggerOptions(level: string, stream: LogStream = stdoutLines) {
  return {
    level,
    stream,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        'request.headers.authorization',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: LoggedRequest) => ({
        method: request.method,
        url: maskTokens(request.originalUrl ?? request.url ?? ''),
        remoteAddress: request.ip,
      }),
    },
  };
}

/**
 * Fastify's request lines switched off (accessLog writes one per request instead of its two); its other
 * lines (a stream that failed, an unknown route) stay, but for a stream ended on purpose (an ApiError: a
 * long answer whose token lapsed, long-answers.ts), which said so itself.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
  override streamError(
    error: Error,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (!(error instanceof ApiError)) super.streamError(error, request, reply, metadata);
  }
}

/** The answers under way, per app: shutdown waits for the lines of those it cuts (answersClosed). */
const underWay = new WeakMap<FastifyInstance, Set<ServerResponse>>();

/**
 * One line per request, when its answer ends (Fastify's own logging wrote two: one on arrival and one on
 * completion; OneLinePerRequest turns them off). An answer that was cut off (the client went away, or shutdown closed
 * the connection at SHUTDOWN_TIMEOUT) is a warning: Fastify wrote nothing for it, so a PGN export that
 * broke half-way left no trace.
 */
export function accessLog(app: FastifyInstance): void {
  const open = new Set<ServerResponse>();
  underWay.set(app, open);
  app.addHook('onRequest', async (request, reply) => {
    open.add(reply.raw);
    reply.raw.once('close', () => {
      open.delete(reply.raw);
      const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
      if (reply.raw.writableFinished) return request.log.info(line, 'request completed');
      // A long-poll's client may leave while it waits: nothing was cut short (its wait is counted in
      // chessport_feed_waits_total, outcome disconnect).
      if (isWaiting(reply.raw))
        return request.log.info({ ...line, left: true }, 'request left while waiting');
      request.log.warn({ ...line, aborted: true }, 'request aborted: the connection closed first');
      // Counted here, where it is logged, so that /metrics and the log agree (Fastify's onResponse, which
      // counts the answered ones, never runs for these). The route template, never the URL with its ids.
      const route = request.routeOptions.url ?? 'unmatched';
      requestMetrics.aborted.inc({ method: request.method, route, status: String(reply.statusCode) });
    });
  });
}

/**
 * Resolves when every answer under way has closed and been logged, or after ms. A connection that shutdown
 * destroys closes its answer a turn of the event loop after the server reports itself closed.
 */
export function answersClosed(app: FastifyInstance, ms: number): Promise<void> {
  const open = underWay.get(app);
  if (!open || open.size === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const check = () => {
      if (open.size > 0) return;
      clearTimeout(timer);
      resolve();
    };
    for (const res of open) res.once('close', check);
  });
}
