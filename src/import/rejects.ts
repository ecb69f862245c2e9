// The rejects file: the original text of every rejected game, created only when a game is rejected.

import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export class RejectsWriter {
  private path: string;
  private readonly append: boolean;
  private out: WriteStream | null = null;

  /** With append, rejected games go after what the file holds (several inputs sharing one rejects file). */
  constructor(path: string, options: { append?: boolean } = {}) {
    this.path = path;
    this.append = options.append ?? false;
  }

  async write(text: string): Promise<void> {
    if (!this.out) {
      // Input folders may be read-only (a mounted archive, a shared corpus): then the rejects go to the
      // working folder.
      if (!(await isWritableFolder(dirname(this.path)))) this.path = basename(this.path);
      this.out = createWriteStream(this.path, { flags: this.append ? 'a' : 'w' });
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

/**
 * Whether files may be created in `folder`. A folder without any write permission bit counts as read-only
 * even where access() says otherwise: root may write anywhere, but a folder marked read-only is not ours.
 */
async function isWritableFolder(folder: string): Promise<boolean> {
  try {
    await access(folder, constants.W_OK);
    return ((await stat(folder)).mode & 0o222) !== 0;
  } catch {
    return false;
  }
}
