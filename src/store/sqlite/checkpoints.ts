// Checkpoints on a thread of their own while an import writes to SQLite.
//
// In WAL mode each commit appends pages to the -wal file; a checkpoint copies them into the database file and
// flushes both to disk (two fsyncs). SQLite runs it inside the commit that crosses wal_autocheckpoint, so an
// import's writer would wait for the disk, for a good part of its time. Here the writer's own checkpoints are
// off while a worker thread, on a second connection, runs PASSIVE checkpoints one after another: they never
// block the writer, and the flushes happen while it goes on writing. Durability is unchanged
// (synchronous=NORMAL: a commit is in the WAL, which is flushed before any of it is copied).
//
// A PASSIVE checkpoint copies what was committed when it began; the WAL starts again from its beginning
// only when a writer begins while everything in it has been copied. If the writer outruns the checkpoints,
// the WAL grows: past WAL_LIMIT_BYTES a checkpoint that covers all commits so far starts after the one under
// way, and the writer's next transaction waits for it (ready()), so that it starts the WAL afresh. The
// writer goes on with other work meanwhile (an import's main thread takes in the next games).
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Database as SqliteHandle } from 'better-sqlite3';
import { workerUrl } from '../../workers/bundle.ts';
import type { BulkWrites } from '../types.ts';

/** The longest the -wal file may grow before the writer waits for the checkpoints (default). */
export const WAL_LIMIT_BYTES = 64 << 20;
/**
 * The writer's own checkpoints otherwise (open.ts): once the WAL holds 40 MB, ten times SQLite's default
 * of 1,000 4 KB pages, so that a large import without this class checkpoints a tenth as often.
 */
const AUTOCHECKPOINT_BYTES = 40 << 20;
/** The -wal file's header, and each frame's header before its page (sqlite.org/fileformat.html). */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;

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
  /** While the WAL is past its limit: the checkpoint, after the one under way, that copies all of it. */
  private gate: Promise<void> | undefined;
  private finish: (() => void) | undefined;
  private failed = false;

  private readonly handle: SqliteHandle;
  private readonly walLimit: number;
  private readonly pageSize: number;
  /** The -shm file, open for reading the WAL's frame count (walBytes). */
  private shm: number | undefined;

  constructor(handle: SqliteHandle, walLimitBytes = WAL_LIMIT_BYTES) {
    this.handle = handle;
    this.walLimit = walLimitBytes;
    this.walFile = `${handle.name}-wal`;
    this.pageSize = handle.pragma('page_size', { simple: true }) as number;
    try {
      this.shm = openSync(`${handle.name}-shm`, 'r');
    } catch {
      this.shm = undefined;
    }
    this.worker = new Worker(workerUrl(new URL('./checkpoint-worker.ts', import.meta.url)), {
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

  /** Before each write transaction: while the WAL is past its limit, waits until all of it is copied. */
  async ready(): Promise<void> {
    await this.gate;
  }

  /** After each commit: starts a checkpoint unless one is under way; past the limit, the one ready() awaits. */
  committed(): void {
    if (this.failed) return;
    if (walBytes(this.walFile, this.shm, this.pageSize) > this.walLimit) {
      this.gate ??= (async () => {
        await this.running;
        if (!this.failed) await this.checkpoint(); // begun after the last commit, it copies all of them
        this.gate = undefined;
      })();
    } else if (!this.running) {
      void this.checkpoint();
    }
  }

  /** Waits for the checkpoint under way and gives checkpoints back to the writer. */
  async end(): Promise<void> {
    await this.gate;
    await this.running;
    if (!this.failed) {
      this.worker.postMessage('close');
      await this.exited;
    }
    this.restore();
  }

  private restore(): void {
    checkpointAtWalSize(this.handle);
    if (this.shm !== undefined) closeSync(this.shm);
    this.shm = undefined;
  }
}

/**
 * The bytes of the WAL in use: its frames since it last started afresh, read from the wal-index header in
 * the -shm file (mxFrame, a 32-bit integer in native byte order at offset 16: sqlite.org/walformat.html).
 * The -wal file's size says nothing once it has grown: SQLite reuses the file from its start, without
 * shrinking it, so the writer would wait for a full checkpoint after every commit from then on. Without a
 * -shm file, the -wal file's size.
 */
function walBytes(walFile: string, shm: number | undefined, pageSize: number): number {
  if (shm !== undefined) {
    try {
      const header = Buffer.alloc(20);
      if (readSync(shm, header, 0, 20, 0) === 20) {
        const frames = endianness() === 'LE' ? header.readUInt32LE(16) : header.readUInt32BE(16);
        return WAL_HEADER_BYTES + frames * (WAL_FRAME_HEADER_BYTES + pageSize);
      }
    } catch {
      // fall back to the file's size
    }
  }
  try {
    return statSync(walFile).size;
  } catch {
    return 0;
  }
}
