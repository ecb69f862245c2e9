// What a run's retries cost, for its summary: the requests refused with 429 and the wall-clock time spent
// waiting on the rate limit, and the retries after 503s, gateway errors and network failures.
import type { RetryEvent } from '@chessport/client';

export interface RetryFigures {
  /** Requests refused with 429 and retried after waiting. */
  rateLimitWaits: number;
  /** Wall-clock time spent waiting on the rate limit, in whole milliseconds. */
  rateLimitWaitMs: number;
  /** Retries after 503, gateway errors or network failures. */
  retries: number;
}

export class RetryTally {
  #rateLimitWaits = 0;
  #rateLimitWaitMs = 0;
  #retries = 0;
  /** When the longest rate-limit wait under way ends (performance.now()). */
  #waitingUntil = 0;

  /** Counts one retry the client announces (its onRetry), at the time it announces it. */
  count(event: RetryEvent, now = performance.now()): void {
    if (event.reason !== 'rate_limited') {
      this.#retries++;
      return;
    }
    this.#rateLimitWaits++;
    // Wall-clock time: parallel requests wait together, so only the part past the current wait counts.
    const until = now + event.waitMs;
    this.#rateLimitWaitMs += Math.max(0, until - Math.max(now, this.#waitingUntil));
    this.#waitingUntil = Math.max(this.#waitingUntil, until);
  }

  figures(): RetryFigures {
    return {
      rateLimitWaits: this.#rateLimitWaits,
      rateLimitWaitMs: Math.round(this.#rateLimitWaitMs),
      retries: this.#retries,
    };
  }
}
