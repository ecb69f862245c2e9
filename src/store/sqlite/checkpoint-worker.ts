// Worker thread of BackgroundCheckpoints: its own connection to the SQLite file, one PASSIVE checkpoint per
// message (a PASSIVE checkpoint never waits for the writer nor makes it wait).
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const db = new SQLite((workerData as { file: string }).file);
db.pragma('busy_timeout = 10000');
parentPort?.on('message', (message: 'checkpoint' | 'close') => {
  if (message === 'checkpoint') {
    parentPort?.postMessage(db.pragma('wal_checkpoint(PASSIVE)'));
    return;
  }
  db.close();
  parentPort?.close(); // the thread ends
});
