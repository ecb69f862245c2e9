// Checkpoints on a thread of their own while an import writes to SQLite.
//
// In WAL mode each commit appends pages to the -wal file; a checkpoint copies them into the database file
// and flushes both to disk (two fsyncs). SQLite runs it inside the commit that crosses wal_autocheckpoint,
// so the import's writer waited for the disk: with 198k short games, 1.5 of 5.5 s (measured as the
// difference to synchronous=OFF). Here the writer's own checkpoints are off while a worker thread, on a
// second connection, runs PASSIVE checkpoints one after another: they never block the writer, and the
// flushes happen while it goes on writing. Durability is unchanged (synchronous=NORMAL: a commit is in the
// WAL, which is flushed before any of it is copied).
//
// A PASSIVE checkpoint copies what was committed when it began; the WAL starts again from its beginning
// only when a writer begins while everything in it has been copied. If the writer outruns the checkpoints,
// the -wal file grows: past WAL_LIMIT_BYTES the writer waits for a checkpoint that covers all its commits,
// so that its next transaction starts the WAL afresh.
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Database as SqliteHandle } from 'better-sqlite3';
import type { BulkWrites } from './types.ts';

/** The longest the -wal file may grow before the writer waits for the checkpoints (default). */
export const WAL_LIMIT_BYTES = 64 << 20;
/**
 * The writer's own checkpoints otherwise (connect.ts): once the WAL holds 40 MB, ten times SQLite's default
 * of 1,000 4 KB pages, so that a large import without this class checkpoints a tenth as often.
 */
const AUTOCHECKPOINT_BYTES = 40 << 20;

/** Sets the connection's wal_autocheckpoint to AUTOCHECKPOINT_BYTES in its own page size. */
export function checkpointAtWalSize(handle: SqliteHandle): void {
  const pageSize = handle.pragma('page_size', { simple: true }) as number;
  handle.pragma(`wal_autocheckpoint = ${Math.round(AUTOCHECKPOINT_BYTES / pageSize)}`);
}

export class BackgroundCheckpoints implements BulkWrites {
  private readonly worker: Worker;
  private readonly walFile: string;
  private readonly exited: Promise<void>;
  /** The checkpoint under way, if any, and what ends it. */
  private running: Promise<void> | undefined;
  private finish: (() => void) | undefined;
  private failed = false;

  private readonly handle: SqliteHandle;
  private readonly walLimit: number;

  constructor(handle: SqliteHandle, walLimitBytes = WAL_LIMIT_BYTES) {
    this.handle = handle;
    this.walLimit = walLimitBytes;
    this.walFile = `${handle.name}-wal`;
    this.worker = new Worker(new URL('./sqlite-checkpoint-worker.ts', import.meta.url), {
      workerData: { file: handle.name },
    });
    this.worker.on('message', () => this.finish?.());
    // Without its thread the writer checkpoints as before: the import goes on.
    this.worker.on('error', () => {
      this.failed = true;
      this.restore();
      this.finish?.();
    });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    handle.pragma('wal_autocheckpoint = 0');
  }

  private checkpoint(): Promise<void> {
    const running = new Promise<void>((resolve) => {
      this.finish = () => {
        this.finish = undefined;
        this.running = undefined;
        resolve();
      };
    });
    this.running = running;
    this.worker.postMessage('checkpoint');
    return running;
  }

  /** After each commit: starts a checkpoint unless one is under way; waits for one if the WAL is too long. */
  async committed(): Promise<void> {
    if (this.failed) return;
    if (walBytes(this.walFile) > this.walLimit) {
      await this.running;
      if (!this.failed) await this.checkpoint(); // begun after the last commit, it copies all of them
    } else if (!this.running) {
      void this.checkpoint();
    }
  }

  /** Waits for the checkpoint under way and gives checkpoints back to the writer. */
  async end(): Promise<void> {
    await this.running;
    if (!this.failed) {
      this.worker.postMessage('close');
      await this.exited;
    }
    this.restore();
  }

  private restore(): void {
    checkpointAtWalSize(this.handle);
  }
}

function walBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
