// A sync of one folder: its lock (one sync at a time), its mirror, and a run of the sync over them (run.ts),
// timed. What the folder holds: mirror.sqlite, the sign-in a run keeps (oauth-tokens.json), the lock file, and
// with pgnFiles the PGN files.
import { join, resolve } from 'node:path';
import { SyncError } from './errors.ts';
import { FolderBusyError, type FolderLock, lockFolder } from './lock.ts';
import { Mirror } from './mirror.ts';
import type { SyncOptions, SyncSummary } from './options.ts';
import { makePrivateFolder } from './private-files.ts';
import { SyncRun } from './run.ts';
import { TOKENS_FILE } from './saved-sign-in.ts';

export const MIRROR_FILE = 'mirror.sqlite';
export const LOCK_FILE = 'sync.lock';
export const PGN_FOLDER = 'pgn';

/** Syncs the mirror in `options.out` with the server: once, or with `watch` until the signal aborts. */
export async function syncMirror(options: SyncOptions): Promise<SyncSummary> {
  const started = performance.now();
  if (options.switchReader && !options.full) {
    throw new Error('--switch-reader goes with --full: a mirror that changes reader starts over');
  }
  const out = resolve(options.out);
  makePrivateFolder(out);
  let lock: FolderLock;
  try {
    lock = lockFolder(join(out, LOCK_FILE));
  } catch (error) {
    if (error instanceof FolderBusyError) throw new SyncError('busy', error.message, { cause: error });
    throw error;
  }
  try {
    const mirror = new Mirror(join(out, MIRROR_FILE));
    try {
      const files = { tokens: join(out, TOKENS_FILE), pgnFolder: join(out, PGN_FOLDER) };
      const summary = await new SyncRun(options, mirror, files).run();
      return { ...summary, elapsedMs: Math.round(performance.now() - started) };
    } finally {
      mirror.close();
    }
  } finally {
    lock.release();
  }
}
