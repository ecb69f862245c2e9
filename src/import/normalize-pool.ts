// A fixed pool of worker threads normalising batches in parallel. Results come back in submission order
// (run() returns a promise per batch; the caller awaits them first-in first-out), so games reach the
// store in file order whatever order the workers finish in.
//
// A batch goes to a worker at once, to the one with the fewest batches outstanding, and waits in that
// worker's message queue. Handing out the next batch only when the main thread took the previous result
// left the worker idle whenever the main thread was busy (splitting, writing to SQLite): measured, the two
// then took turns instead of working at the same time.
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerUrl } from '../store/worker-bundle.ts';
import { type BatchItem, normalizeBatch, type PackedBatch, unpackBatch } from './normalize-batch.ts';

type Pending = { resolve: (items: BatchItem[]) => void; reject: (error: Error) => void };

export class NormalizePool {
  private readonly workers: { worker: Worker; outstanding: number }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** size 0 normalises inline on the calling thread (small inputs, tests). */
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

  run(texts: string[]): Promise<BatchItem[]> {
    if (this.workers.length === 0) return Promise.resolve(unpackBatch(normalizeBatch(texts)));
    const id = this.nextId++;
    const result = new Promise<BatchItem[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    let target = this.workers[0] as { worker: Worker; outstanding: number };
    for (const entry of this.workers) if (entry.outstanding < target.outstanding) target = entry;
    target.outstanding++;
    target.worker.postMessage({ id, texts });
    return result;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

/**
 * One worker per core but one to start with: the main thread (reading, splitting, SQLite writes) keeps a
 * core busy too. On 2 cores a second worker from the start finished short and write-bound files no sooner
 * (measured) and cost a fifth more CPU: its own start-up, warm-up and garbage collection. importFile adds
 * workers up to maxPoolSize() when checking games turns out to be the slow part of a long import.
 */
export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** One worker per core. */
export function maxPoolSize(): number {
  return Math.max(1, availableParallelism());
}

/** Inputs below this size are normalised on the calling thread: starting a worker (~0.1 s) costs more. */
export const SMALL_INPUT_BYTES = 1 << 20;

/**
 * A pool for importing `files`, started at once, or none when every file is small (a file that cannot be
 * read counts as small: its import fails by itself). A caller that starts it before opening the store has
 * the workers booting meanwhile, and imports of several files that share it find them warm.
 */
export async function poolForFiles(files: readonly string[]): Promise<NormalizePool | undefined> {
  const sizes = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (s) => s.size,
        () => 0,
      ),
    ),
  );
  return sizes.some((size) => size >= SMALL_INPUT_BYTES) ? new NormalizePool() : undefined;
}
