// A fixed pool of worker threads normalising batches in parallel. Results come back in submission order
// (run() returns a promise per batch; the caller awaits them first-in first-out), so games reach the
// store in file order whatever order the workers finish in.
//
// A batch goes to a worker at once, to the one with the fewest batches outstanding, and waits in that
// worker's message queue. Handing out the next batch only when the main thread takes the previous result
// would leave the worker idle whenever the main thread is busy (splitting, writing to SQLite): the two would
// take turns instead of working at the same time (docs/performance.md).
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerUrl } from '../workers/bundle.ts';
import { textSize } from './input.ts';
import { type CheckedBatch, checkBatch, type PackedBatch, unpackBatch } from './normalize-batch.ts';

type Pending = { resolve: (batch: CheckedBatch) => void; reject: (error: Error) => void };

export class NormalizePool {
  private readonly workers: { worker: Worker; outstanding: number }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** size 0 normalises inline on the calling thread (imports with little to check, tests). */
  constructor(size = defaultPoolSize()) {
    for (let i = 0; i < size; i++) this.grow();
  }

  /** Starts one more worker; it takes batches submitted from now on. */
  grow(): void {
    const entry = {
      worker: new Worker(workerUrl(new URL('./normalize-worker.ts', import.meta.url))),
      outstanding: 0,
    };
    entry.worker.on('message', (message: { id: number; batch: PackedBatch }) => {
      entry.outstanding--;
      this.pending.get(message.id)?.resolve(unpackBatch(message.batch));
      this.pending.delete(message.id);
    });
    entry.worker.on('error', (error: Error) => {
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
    });
    this.workers.push(entry);
  }

  get size(): number {
    return this.workers.length;
  }

  /** Checks the games `texts`, whose first lines in the input are `lines` (default: each from 1). */
  run(texts: string[], lines?: number[]): Promise<CheckedBatch> {
    if (this.workers.length === 0) return Promise.resolve(checkBatch(texts, lines));
    const id = this.nextId++;
    const result = new Promise<CheckedBatch>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    let target = this.workers[0] as { worker: Worker; outstanding: number };
    for (const entry of this.workers) if (entry.outstanding < target.outstanding) target = entry;
    target.outstanding++;
    target.worker.postMessage({ id, texts, lines });
    return result;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

/**
 * One worker per core but one to start with: the main thread (reading, splitting, SQLite writes) keeps a
 * core busy too. A second worker from the start finishes short and write-bound files no sooner and costs more
 * CPU, its own start-up, warm-up and garbage collection (docs/performance.md). WorkerGrowth adds workers up
 * to maxPoolSize() when checking games turns out to be the slow part of a long import.
 */
export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** One worker per core. */
export function maxPoolSize(): number {
  return Math.max(1, availableParallelism());
}

/** How much of an input is read to estimate its number of games. */
const SAMPLE_BYTES = 1 << 20;
/**
 * About as much checking as a short game takes, in bytes of input (comments, long games): docs/performance.md.
 */
const BYTES_PER_GAME = 800;
/**
 * Imports of less checking than this many short games (estimated: games, plus bytes / BYTES_PER_GAME) are
 * normalised on the calling thread: below it, a worker's start-up and warm-up take longer than it saves, and
 * above it the worker pays off (docs/performance.md: a TWIC issue, a TCEC event, lichess games, opening
 * lines and master games on either side of it).
 */
const INLINE_GAMES = 7000;

/**
 * The estimated checking work of a file, in short games (see INLINE_GAMES). 0 for what is not a regular file
 * (opening a named pipe would wait for its writer, and reading it take text from the import) and for what
 * cannot be read (its import fails by itself).
 */
async function workOf(file: string): Promise<number> {
  try {
    if (!(await stat(file)).isFile()) return 0;
    // A compressed file's text: its size estimated, its sample decompressed.
    const { size, sample } = await textSize(file, SAMPLE_BYTES);
    // Games are counted by their Result tags: one without is missed, one quoted in a comment counted.
    let games = 0;
    for (let at = sample.indexOf(RESULT_TAG); at !== -1; at = sample.indexOf(RESULT_TAG, at + 1)) games++;
    return (games * size) / Math.max(1, sample.length) + size / BYTES_PER_GAME;
  } catch {
    return 0;
  }
}
const RESULT_TAG = '[Result ';

/**
 * Whether importing `files` is worth workers: checking them all is estimated at INLINE_GAMES short games or
 * more (each file's games extrapolated from its first megabyte).
 */
export async function worthWorkers(files: readonly string[]): Promise<boolean> {
  const works = await Promise.all(files.map(workOf));
  return works.reduce((sum, work) => sum + work, 0) >= INLINE_GAMES;
}

/**
 * A pool for importing `files`, started at once, or none when they are not worth workers (worthWorkers). A
 * caller that starts it before opening the store has the workers booting meanwhile, and imports of several
 * files that share it find them warm.
 */
export async function poolForFiles(files: readonly string[]): Promise<NormalizePool | undefined> {
  return (await worthWorkers(files)) ? new NormalizePool() : undefined;
}
