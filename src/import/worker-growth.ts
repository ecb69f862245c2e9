// Another normalising worker for a long import whose checking, not its main thread, turns out to be the slow
// part: judged by how long the main thread waits for the workers' results.
import type { NormalizePool } from './normalize-pool.ts';

// Another worker is started when, over half a second of the import, the main thread spent more than a
// third of it waiting for results, and the rest of the file would still take this long at the speed so far:
// a worker's start-up and warm-up pay off only over a long run; short and write-bound imports get slower
// with one more (docs/performance.md). The first window starts after the workers' start-up.
const GROW_WINDOW_MS = 500;
const GROW_WAITING_SHARE = 1 / 3;
const GROW_WHEN_SECONDS_LEFT = 3;

export class WorkerGrowth {
  private readonly pool: NormalizePool;
  private readonly maxWorkers: number;
  private readonly textBytes: number;
  private readonly started: number;
  /** Where the current window opened (performance.now()), -1 before the first results. */
  private windowStart = -1;
  /** The main thread's waits for results since windowStart, in ms. */
  private waited = 0;

  /**
   * Grows `pool` up to `maxWorkers` over an import of about `textBytes` of text that started at `started`
   * (performance.now()).
   */
  constructor(pool: NormalizePool, maxWorkers: number, textBytes: number, started: number) {
    this.pool = pool;
    this.maxWorkers = maxWorkers;
    this.textBytes = textBytes;
    this.started = started;
  }

  /**
   * Waits for results the workers have not sent yet, counting the wait; then, with `doneChars` of the text
   * checked (these results included), starts another worker when that is worth it.
   */
  async wait<T>(results: Promise<T>, doneChars: number): Promise<T> {
    const since = performance.now();
    const value = await results;
    // The first results take the workers' start-up and warm-up: the window opens after them.
    if (this.windowStart < 0) this.windowStart = performance.now();
    else this.waited += performance.now() - since;
    this.maybeGrow(doneChars);
    return value;
  }

  private maybeGrow(doneChars: number): void {
    const now = performance.now();
    if (this.windowStart < 0 || this.pool.size === 0 || this.pool.size >= this.maxWorkers) return;
    if (now - this.windowStart < GROW_WINDOW_MS) return;
    const waiting = this.waited / (now - this.windowStart);
    this.windowStart = now;
    this.waited = 0;
    // The rest of the text at the speed so far (chars ~ bytes).
    const secondsLeft = ((this.textBytes - doneChars) / doneChars) * ((now - this.started) / 1000);
    if (waiting > GROW_WAITING_SHARE && secondsLeft > GROW_WHEN_SECONDS_LEFT) this.pool.grow();
  }
}
