// One sync at a time per folder. The lock is a SQLite exclusive transaction on a lock file: the operating
// system drops it when the process dies, SIGKILL included, so a crashed run never leaves a stale lock
// behind, and no process id has to be guessed alive or dead.
import Sqlite from 'better-sqlite3';
import { createPrivately } from './private-files.ts';

export class FolderBusyError extends Error {}

export interface FolderLock {
  release(): void;
}

export function lockFolder(file: string): FolderLock {
  createPrivately(file);
  const db = new Sqlite(file, { timeout: 0 });
  try {
    db.exec('begin exclusive');
  } catch (error) {
    db.close();
    if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) {
      throw new FolderBusyError(`another chessport sync is running on this folder (it holds ${file})`);
    }
    throw error;
  }
  return {
    release: () => {
      db.exec('rollback');
      db.close();
    },
  };
}
