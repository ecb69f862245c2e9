// The take-over's writer thread, seen from the run: the export's lines go to it as text, a batch at a time,
// and it parses them and inserts the games into the mirror (takeover-worker.ts) while this thread downloads
// the next ones. So the download, the parse and the mirror's writes overlap instead of taking turns on one
// thread (docs/performance.md). The thread ends on every path: finish() at the end of the export, stop()
// when the run fails or is interrupted; a failure of the thread (a line that is no game, the disk full) is
// the error of the batch it failed on, and of every write after it.
import { Worker } from 'node:worker_threads';

/** What the run sends the thread: a batch of lines to write, or the end of the export. */
export type WriterRequest = { lines: string[] } | 'finish';

/** What the thread answers, a batch at a time in order: what it wrote, or why it could not. */
export type WriterReply = { written: number; databaseIds: string[] } | { failed: string };

/** A batch written: its games, and the databases they are in. */
export interface WrittenBatch {
  written: number;
  databaseIds: string[];
}

/**
 * Batches sent and not yet written that a write may leave queued (16,000 games of 2,000, about 27 MB): the
 * thread has work while the run's thread checkpoints the WAL, which holds it up to a few hundred ms.
 */
const QUEUED = 8;

/** The URL of the thread's module: its sources, unless the caller maps it to a bundle (SyncOptions.workerUrl). */
export const TAKE_OVER_WORKER = new URL('./takeover-worker.ts', import.meta.url);

export class TakeOverWriter {
  readonly #worker: Worker;
  /** The answers of the batches sent, in order. */
  readonly #waiting: { resolve: (batch: WrittenBatch) => void; reject: (error: Error) => void }[] = [];
  readonly #queued: Promise<WrittenBatch>[] = [];
  readonly #exited: Promise<number>;
  #failure: Error | undefined;

  /** Starts the thread, which opens a connection of its own to the mirror `file`. */
  constructor(file: string, url: URL = TAKE_OVER_WORKER) {
    this.#worker = new Worker(url, { workerData: { file } });
    this.#worker.on('message', (reply: WriterReply) => {
      if ('failed' in reply) this.#fail(new Error(reply.failed));
      else this.#waiting.shift()?.resolve(reply);
    });
    this.#worker.on('error', (error: unknown) =>
      this.#fail(error instanceof Error ? error : new Error(`the mirror's writer thread failed: ${error}`)),
    );
    this.#exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    void this.#exited.then((code) => {
      this.#fail(
        new Error(`the mirror's writer thread stopped before the take-over's end (exit code ${code})`),
      );
    });
  }

  /**
   * Sends a batch of lines, and returns the batches written meanwhile: waits for the oldest while more than
   * QUEUED are queued, so that the download runs no further ahead of the writes than that.
   */
  async write(lines: string[]): Promise<WrittenBatch[]> {
    if (this.#failure) throw this.#failure;
    const written = new Promise<WrittenBatch>((resolve, reject) => this.#waiting.push({ resolve, reject }));
    // Awaited in turn below or in finish(); until then a failure must not count as unhandled.
    written.catch(() => undefined);
    this.#queued.push(written);
    this.#send({ lines });
    const done: WrittenBatch[] = [];
    while (this.#queued.length > QUEUED) done.push(await (this.#queued.shift() as Promise<WrittenBatch>));
    return done;
  }

  /** Waits for every batch sent, then closes the thread's connection; the thread ends. Returns the batches. */
  async finish(): Promise<WrittenBatch[]> {
    const done: WrittenBatch[] = [];
    while (this.#queued.length > 0) done.push(await (this.#queued.shift() as Promise<WrittenBatch>));
    this.#send('finish');
    const code = await this.#exited;
    if (code !== 0)
      throw this.#failure ?? new Error(`the mirror's writer thread ended with exit code ${code}`);
    return done;
  }

  /** Ends the thread at once, whatever it was doing (a batch not committed is rolled back); safe after finish(). */
  async stop(): Promise<void> {
    await this.#worker.terminate();
  }

  #send(request: WriterRequest): void {
    this.#worker.postMessage(request);
  }

  /** The thread failed, or ended: every batch still waiting fails with why. */
  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiting of this.#waiting.splice(0)) waiting.reject(this.#failure);
  }
}
