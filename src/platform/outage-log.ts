// A dependency's outage (the store, the shared rate-limit counters) as a handful of log lines rather than one
// per request: under load a failing store failed thousands of requests a second, each with its own warning,
// and the log drowned in identical lines.
//
// The first failure is logged at once, with its cause. While failures go on, one line per interval says how
// many more there were. The outage ends at the first interval's end at which the latest outcome seen was a
// success: that line says how long it lasted (from the first failure to the first success after the last one)
// and how many failed in all. Deciding at the interval's end, not at the first success, keeps a dependency
// that fails every other request (overloaded, one of its connections broken) to two lines per interval too.

export interface OutageLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** What the lines say; counts and durations come formatted (`1,234`, `37`, `2.6`). */
export interface OutageWords {
  /** The first failure's line; its details carry the cause. */
  down: string;
  more(count: string, seconds: string): string;
  back(seconds: string, count: string): string;
}

export const DEFAULT_OUTAGE_LOG_INTERVAL_MS = 10_000;

const number = (n: number) => n.toLocaleString('en-US');

/** `requests`, or `request` after a count of 1. */
export const requests = (count: string) => (count === '1' ? 'request' : 'requests');

/** Whole seconds, or tenths below 10 s (a blip of 0.3 s is not "0 s"). */
function seconds(ms: number): number {
  return ms < 9_950 ? Math.round(ms / 100) / 10 : Math.round(ms / 1000);
}

export class OutageLog {
  readonly #log: OutageLogger;
  readonly #words: OutageWords;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** When the outage began; undefined while the dependency answers. */
  #since: number | undefined;
  #total = 0;
  /** Failures since the last line. */
  #pending = 0;
  #reportedAt = 0;
  /** The first success after the latest failure, if any. */
  #answeredAt: number | undefined;

  constructor(log: OutageLogger, words: OutageWords, intervalMs = DEFAULT_OUTAGE_LOG_INTERVAL_MS) {
    this.#log = log;
    this.#words = words;
    this.#intervalMs = intervalMs;
  }

  /** Whether an outage is under way (as far as the outcomes seen tell). */
  get down(): boolean {
    return this.#since !== undefined;
  }

  /**
   * A request that the dependency failed. `log` is the request's logger when there is one, so that the
   * first line carries its request id.
   */
  failed(details: object, log: OutageLogger = this.#log): void {
    this.#answeredAt = undefined;
    this.#total++;
    if (this.#since !== undefined) {
      this.#pending++;
      return;
    }
    const now = Date.now();
    this.#since = now;
    this.#reportedAt = now;
    log.warn(details, this.#words.down);
    this.#timer = setInterval(() => this.#report(), this.#intervalMs);
    this.#timer.unref();
  }

  /** A request that the dependency answered. */
  succeeded(): void {
    if (this.#since !== undefined && this.#answeredAt === undefined) this.#answeredAt = Date.now();
  }

  /** Says what is still unsaid (shutdown during an outage) and stops the timer. */
  close(): void {
    if (this.#since === undefined) return;
    if (this.#answeredAt !== undefined) this.#report();
    else this.#summarise(Date.now());
    this.#stop();
  }

  #report(): void {
    const since = this.#since;
    if (since === undefined) return;
    if (this.#answeredAt === undefined) {
      this.#summarise(Date.now());
      return;
    }
    const lasted = this.#answeredAt - since;
    this.#log.info(
      { outageSeconds: seconds(lasted), failed: this.#total },
      this.#words.back(number(seconds(lasted)), number(this.#total)),
    );
    this.#stop();
  }

  #summarise(now: number): void {
    // A quiet interval (no traffic at all) says nothing: there is nothing new to tell.
    if (this.#pending === 0) return;
    const elapsed = now - this.#reportedAt;
    this.#log.warn(
      { failed: this.#pending, seconds: seconds(elapsed) },
      this.#words.more(number(this.#pending), number(seconds(elapsed))),
    );
    this.#pending = 0;
    this.#reportedAt = now;
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#since = undefined;
    this.#answeredAt = undefined;
    this.#total = 0;
    this.#pending = 0;
  }
}
