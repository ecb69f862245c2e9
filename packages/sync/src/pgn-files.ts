// One PGN file per mirrored database, each replaced atomically (a temp file, then rename): a reader sees
// the old file or the new one, never half of one, and a crash leaves at most a temp file that the next run
// removes. The files hold what the API's export holds: the games' PGN, one blank line between games.
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import type { Mirror } from './mirror.ts';
import { makePrivateFolder } from './private-files.ts';

const TEMP = /\.pgn\.tmp-\d+$/;
const FLUSH_BYTES = 1 << 20;
// The slug names the file, and the slug comes from the server: one with a path in it (`../x`), or a hidden
// name, would write outside the folder. chessport's own slugs are lower-case letters, digits and hyphens.
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/;

export function writePgnFiles(mirror: Mirror, folder: string): string[] {
  const databases = mirror.databases();
  const unsafe = databases.find((database) => !FILE_NAME.test(database.slug));
  if (unsafe) {
    throw new Error(
      `the server gave database ${JSON.stringify(unsafe.id)} the slug ${JSON.stringify(unsafe.slug)}, ` +
        'which is not a plain file name: no PGN file was written',
    );
  }
  makePrivateFolder(folder);
  const written: string[] = [];
  for (const database of databases) {
    const file = join(folder, `${database.slug}.pgn`);
    const temp = `${file}.tmp-${process.pid}`;
    // A new temp file, never one that is there (a link would take the games wherever it points); it replaces
    // the PGN file with that file's mode, or is its owner's only, like the mirror.
    const mode = (statSync(file, { throwIfNoEntry: false })?.mode ?? 0o600) & 0o777;
    rmSync(temp, { force: true });
    const fd = openSync(temp, 'wx', 0o600);
    try {
      fchmodSync(fd, mode);
      // Buffered in ~1 MB pieces: constant memory however large the database.
      let chunk = '';
      let first = true;
      for (const pgn of mirror.databasePgn(database.id)) {
        chunk += first ? pgn : `\n${pgn}`;
        first = false;
        if (chunk.length >= FLUSH_BYTES) {
          writeSync(fd, chunk);
          chunk = '';
        }
      }
      if (chunk) writeSync(fd, chunk);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    written.push(file);
  }
  // Files of databases that are gone, and temp files of an interrupted run.
  const keep = new Set(written.map((file) => basename(file)));
  for (const name of readdirSync(folder)) {
    if (TEMP.test(name) || (name.endsWith('.pgn') && !keep.has(name)))
      rmSync(join(folder, name), { force: true });
  }
  return written;
}
