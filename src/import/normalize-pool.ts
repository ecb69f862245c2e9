// A fixed pool of worker threads normalising batches in parallel. Results come back in submission order
// (run() returns a promise per batch; the caller awaits them first-in first-out), so games reach the
// store in file order whatever order the workers finish in.
//
// A batch goes to a worker at once, to the one with the fewest batches outstanding, and waits in that
// worker's message queue. Handing out the next batch only when the main thread took the previous result
// left the worker idle whenever the main thread was busy (splitting, writing to SQLite): measured, the two
// then took turns instead of working at the same time.
import { Buffer } from 'node:buffer';
import { type FileHandle, open } from 'node:fs/promises';
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

/** How much of a larger input is read to estimate its number of games. */
const SAMPLE_BYTES = 1 << 20;
/** About as much checking as a short game takes, in bytes of input (comments, long games): warm, ~5.5 us. */
const BYTES_PER_GAME = 800;
/**
 * Inputs of less checking than this many short games (estimated: games, plus bytes / BYTES_PER_GAME) are
 * normalised on the calling thread too. A worker's start-up and warm-up took longer than it saved on them
 * (measured, 2 cores, alternating runs): a TWIC issue (1.9 MB, 2,245 games; estimate 4,600) 0.38 -> 0.35 s,
 * a TCEC event (4.1 MB, 112 games with engine comments; 5,200) 0.21 -> 0.17 s, 2.3 MB of 4,798 lichess
 * games (7,700) the same either way, while 4 MB of 6,000 master games (11,000) took 5% longer, 4 MB of
 * 17,000 opening lines 12% longer.
 */
const INLINE_GAMES = 7000;

/** A file's size and the games in its first SAMPLE_BYTES (tag sections with a Result tag), or none. */
async function sampleOf(file: string): Promise<{ size: number; games: number; sampled: number } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file);
  } catch {
    return undefined; // its import fails by itself
  }
  try {
    const size = (await handle.stat()).size;
    if (size < SMALL_INPUT_BYTES) return { size, games: 0, sampled: size };
    const buffer = Buffer.alloc(Math.min(size, SAMPLE_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // An estimate: a game without a Result tag is missed, a tag quoted in a comment counted.
    let games = 0;
    for (
      let at = buffer.indexOf('[Result ');
      at !== -1 && at < bytesRead;
      at = buffer.indexOf('[Result ', at + 8)
    )
      games++;
    return { size, games, sampled: bytesRead };
  } finally {
    await handle.close();
  }
}

/**
 * Whether importing `files` is worth workers: some file is not small, and checking them all is estimated at
 * INLINE_GAMES short games or more (each file's games extrapolated from its first megabyte). A file that
 * cannot be read counts for nothing: its import fails by itself.
 */
export async function worthWorkers(files: readonly string[]): Promise<boolean> {
  const samples = await Promise.all(files.map(sampleOf));
  let large = false;
  let work = 0;
  for (const sample of samples) {
    if (!sample) continue;
    large ||= sample.size >= SMALL_INPUT_BYTES;
    work += (sample.games * sample.size) / Math.max(1, sample.sampled) + sample.size / BYTES_PER_GAME;
  }
  return large && work >= INLINE_GAMES;
}

/**
 * A pool for importing `files`, started at once, or none when they are not worth workers (worthWorkers). A
 * caller that starts it before opening the store has the workers booting meanwhile, and imports of several
 * files that share it find them warm.
 */
export async function poolForFiles(files: readonly string[]): Promise<NormalizePool | undefined> {
  return (await worthWorkers(files)) ? new NormalizePool() : undefined;
}
