// The rejects file: the original text of every rejected game, created only when a game is rejected.

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export class RejectsWriter {
  private path: string;
  private out: WriteStream | null = null;

  constructor(path: string) {
    this.path = path;
  }

  async write(text: string): Promise<void> {
    if (!this.out) {
      // Input folders may be read-only (a mounted archive): then the rejects go to the working folder.
      const writable = await access(dirname(this.path), constants.W_OK).then(
        () => true,
        () => false,
      );
      if (!writable) this.path = basename(this.path);
      this.out = createWriteStream(this.path);
    }
    const body = text.endsWith('\n') ? text : `${text}\n`;
    if (!this.out.write(`${body}\n`)) await once(this.out, 'drain');
  }

  /** Closes the file; returns its path, or null when nothing was rejected. */
  async close(): Promise<string | null> {
    if (!this.out) return null;
    this.out.end();
    await once(this.out, 'finish');
    return this.path;
  }
}
