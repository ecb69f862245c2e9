// Long answers (the database PGN export) end with their token, and cannot crawl for ever. A token is
// checked when a request arrives; an answer that streams for minutes re-checks it:
// - between its batches (its producer calls `check` before reading the next one): the token's expiry by the
//   clock, and its revocation by the one-row lookup every request makes;
// - on a timer, every TOKEN_CHECK_TICKS ticks (5 s), for an answer whose client reads so slowly that no
//   batch is due: the same, with its expiry exact to the moment (a timer of its own);
// - against STREAM_MAX_DURATION from its start, and STREAM_MIN_RATE: the bytes its client took over each
//   STREAM_RATE_WINDOW, which only count while the client is the one holding it up (its socket's buffers
//   are full).
// An answer that fails any of these is cut off as a broken transfer: the connection is closed without the
// chunked encoding's last chunk, so that a client library raises an error instead of taking a short file for
// a whole one (docs/api.md "Long answers").
import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { heavyMetrics } from '../platform/metrics.ts';
import type { Store, TokenInfo } from '../store/index.ts';
import { lapsedToken, type TokenLapse, tokenLapse } from './auth.ts';
import { HEAVY_DEFAULTS } from './heavy-kinds.ts';

export interface StreamLimits {
  /** The longest a long answer may run (ms); 0: no limit. */
  maxDurationMs: number;
  /** The fewest bytes per second its client must take, over each rate window; 0: no limit. */
  minBytesPerSecond: number;
  /** The window over which the rate is measured (ms). */
  rateWindowMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxDurationMs: HEAVY_DEFAULTS.streamMaxDurationMs,
  minBytesPerSecond: HEAVY_DEFAULTS.streamMinBytesPerSecond,
  rateWindowMs: HEAVY_DEFAULTS.streamRateWindowMs,
};

/** How often a running answer checks its duration and rate. */
const TICK_MS = 1000;
/** How often a running answer re-checks its token when no batch comes (every so many ticks). */
const TOKEN_CHECK_TICKS = 5;
/** The longest a timer can wait (2^31 - 1 ms): a longer one fires at once. */
const TIMER_MAX_MS = 2 ** 31 - 1;

export type CutReason = TokenLapse | 'too_long' | 'too_slow';

const SAID: Record<CutReason, string> = {
  token_revoked: 'its token was revoked',
  token_expired: 'its token expired',
  too_long: 'it ran longer than STREAM_MAX_DURATION',
  too_slow: 'its client took less than STREAM_MIN_RATE',
};

export interface LongAnswers {
  /**
   * The text `produce` yields, as a body to send, under the rules above. `produce` gets the check to await
   * before each batch it reads after the first: it throws the token's 401 when the answer must end, which
   * ends the body, and so the answer (cut off, or a plain 401 if nothing was sent yet).
   */
  stream(
    request: FastifyRequest,
    reply: FastifyReply,
    produce: (check: () => Promise<void>) => AsyncIterable<string>,
  ): Readable;
}

/** How much text a long answer produces between two turns of the event loop. */
const SLICE_CHARS = 16 * 1024;

/**
 * The texts of `source`, with turns of the event loop after every SLICE_CHARS. Without them, to a client that
 * reads at once a stream could run for seconds in microtasks and ticks alone (the store reads synchronously on
 * SQLite, and the socket takes every write at once), and no other request, timer or connection got a turn.
 * An answer waits as many turns as its client runs long answers here (`share`): each answer running gets a
 * slice per turn, and so each client gets as much as any other, however many answers it holds.
 */
async function* yielding(source: AsyncIterable<string>, share: () => number): AsyncGenerator<string> {
  let chars = 0;
  for await (const text of source) {
    yield text;
    chars += text.length;
    if (chars < SLICE_CHARS) continue;
    chars = 0;
    for (let turns = share(); turns > 0; turns--) await setImmediate();
  }
}

export function longAnswers(store: Store, limits: StreamLimits = DEFAULT_STREAM_LIMITS): LongAnswers {
  /** Long answers running in this process, per app and user. */
  const running = new Map<string, number>();
  return {
    stream(request, reply, produce) {
      const token = request.token as TokenInfo;
      const res = reply.raw;
      const client = `${token.appId}:${token.userId}`;
      running.set(client, (running.get(client) ?? 0) + 1);
      let done = false;
      let body: Readable | undefined;

      const cut = (reason: CutReason) => {
        if (done) return;
        done = true;
        heavyMetrics.cut.inc({ reason });
        request.log.info({ reason }, `long answer cut off: ${SAID[reason]}`);
        // Closed without the last chunk: the client sees a broken transfer. Destroying the answer also ends
        // the body and its producer (Fastify destroys the body of an answer that closes).
        res.destroy();
      };
      const check = async () => {
        const lapse = await tokenLapse(store, request, token);
        if (lapse) {
          if (!done) {
            done = true;
            heavyMetrics.cut.inc({ reason: lapse });
            request.log.info({ reason: lapse }, `long answer cut off: ${SAID[lapse]}`);
          }
          throw lapsedToken(lapse);
        }
      };

      const started = Date.now();
      // Bytes the client took: written out of this process, not waiting in its buffers.
      const socket = res.socket;
      const taken = () => (socket ? (socket.bytesWritten ?? 0) - socket.writableLength : 0);
      let windowStart = started;
      let windowTaken = taken();
      let checking = false;
      let ticks = 0;
      const timers: NodeJS.Timeout[] = [];
      timers.push(
        setInterval(() => {
          const now = Date.now();
          if (limits.maxDurationMs > 0 && now - started >= limits.maxDurationMs) return cut('too_long');
          if (now - windowStart >= limits.rateWindowMs) {
            const rate = ((taken() - windowTaken) * 1000) / (now - windowStart);
            // Only while the client holds the answer up: a store that is slow to read is not its fault.
            if (limits.minBytesPerSecond > 0 && rate < limits.minBytesPerSecond && res.writableNeedDrain)
              return cut('too_slow');
            windowStart = now;
            windowTaken = taken();
          }
          if (++ticks % TOKEN_CHECK_TICKS !== 0 || checking) return;
          checking = true;
          tokenLapse(store, request, token, now)
            .then((lapse) => lapse && cut(lapse))
            // A store that fails here fails the next batch's check too, which ends the answer.
            .catch(() => undefined)
            .finally(() => {
              checking = false;
            });
        }, TICK_MS),
      );
      if (token.expiresAt !== null && token.expiresAt - started < TIMER_MAX_MS)
        timers.push(setTimeout(() => cut('token_expired'), Math.max(0, token.expiresAt - started)));
      for (const timer of timers) timer.unref();
      // Until the answer's connection closes, not only until the producer ends: a client may crawl through
      // what the buffers already hold.
      res.once('close', () => {
        done = true;
        for (const timer of timers) clearTimeout(timer);
        const left = (running.get(client) ?? 1) - 1;
        if (left > 0) running.set(client, left);
        else running.delete(client);
        body?.destroy();
      });

      body = Readable.from(yielding(produce(check), () => running.get(client) ?? 1));
      return body;
    },
  };
}
