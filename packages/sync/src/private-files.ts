// The mirror holds a user's games, those of private databases too, as the server's store does: what the sync
// makes is readable by its owner only, whatever the umask (the server's store is made so too). What exists
// already keeps the mode its owner gave it.
import { closeSync, mkdirSync, openSync } from 'node:fs';

/** A folder (and its missing parents) made with mode 0700; an existing one is left as it is. */
export function makePrivateFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
}

/** Creates `file` empty with mode 0600 unless something of that name exists (then nothing happens). */
export function createPrivately(file: string): void {
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
