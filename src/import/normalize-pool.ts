// A fixed pool of worker threads normalising batches in parallel. Results come back in submission order
// (run() returns a promise per batch; the caller awaits them first-in first-out), so games reach the
// store in file order whatever order the workers finish in.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { type BatchItem, normalizeBatch } from './normalize-batch.ts';

type Pending = { resolve: (items: BatchItem[]) => void; reject: (error: Error) => void };

export class NormalizePool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: { id: number; texts: string[] }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** size 0 normalises inline on the calling thread (small inputs, tests). */
  constructor(size = defaultPoolSize()) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL('./normalize-worker.ts', import.meta.url));
      worker.on('message', (message: { id: number; items: BatchItem[] }) => {
        this.pending.get(message.id)?.resolve(message.items);
        this.pending.delete(message.id);
        this.dispatch(worker);
      });
      worker.on('error', (error: Error) => {
        for (const p of this.pending.values()) p.reject(error);
        this.pending.clear();
      });
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  run(texts: string[]): Promise<BatchItem[]> {
    if (this.workers.length === 0) return Promise.resolve(normalizeBatch(texts));
    const id = this.nextId++;
    const result = new Promise<BatchItem[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.queue.push({ id, texts });
    const worker = this.idle.pop();
    if (worker) this.dispatch(worker);
    return result;
  }

  private dispatch(worker: Worker): void {
    const job = this.queue.shift();
    if (!job) {
      if (!this.idle.includes(worker)) this.idle.push(worker);
      return;
    }
    worker.postMessage(job);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** One worker per core: the main thread's reading, splitting and SQLite writes overlap with them. */
export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism());
}
