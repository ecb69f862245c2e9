// The rejects file: the original text of every rejected game, created only when a game is rejected. A file is
// replaced or created only by a write of a rejected game: an import without one touches no file, and no path
// that an import may write is one of its inputs.

import { once } from 'node:events';
import { constants, type Stats } from 'node:fs';
import { access, type FileHandle, lstat, open, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { CUT_NOTE } from '../chess/index.ts';

/**
 * What the imports of one command share about rejects files: its inputs, which are never written, and the
 * files it has written so far. A named rejects file (--rejects) collects the rejects of every input: the
 * first write of the command replaces it, later ones add to it. A default one is each input's own.
 */
export class RejectsFiles {
  private readonly inputs: Promise<Stats[]>;
  private readonly written = new Set<string>();
  private readonly workingFolder: string;

  /** `workingFolder`: where the rejects of an input in a read-only folder go (the command's working folder). */
  constructor(inputs: readonly string[], workingFolder = process.cwd()) {
    this.workingFolder = workingFolder;
    this.inputs = Promise.all(inputs.map((file) => stat(file).catch(() => null))).then((all) =>
      all.filter((s): s is Stats => s !== null),
    );
  }

  /** Whether `path` is one of the inputs: the same file, however it is named (links included). */
  async isInput(path: string): Promise<boolean> {
    const target = await stat(path).catch(() => null);
    if (!target) return false;
    return (await this.inputs).some((s) => s.dev === target.dev && s.ino === target.ino);
  }

  /** Why rejected games could not go to `path` (a --rejects file), or undefined when they can. */
  async problemWith(path: string): Promise<string | undefined> {
    if (path.trim() === '') return 'the rejects file needs a name';
    if (/[\\/]$/.test(path)) return `${path} names a folder: name a file for the rejected games`;
    const target = await stat(path).catch((error: NodeJS.ErrnoException) => error);
    if (target instanceof Error) {
      if (target.code === 'EACCES') return `cannot write ${path}: permission denied`;
      if (target.code === 'ENOTDIR') return `cannot write ${path}: a part of the path is not a folder`;
      if (target.code !== 'ENOENT') return `cannot write ${path}: ${target.message}`;
      // A new file: its folder must exist and take files.
      const folder = dirname(resolve(path));
      const info = await stat(folder).catch(() => null);
      if (!info) return `cannot write ${path}: the folder ${folder} does not exist`;
      if (!info.isDirectory()) return `cannot write ${path}: ${folder} is not a folder`;
      if (!(await isWritable(folder))) return `cannot write ${path}: the folder ${folder} is not writable`;
      return undefined;
    }
    if (target.isDirectory()) return `${path} is a folder: name a file for the rejected games`;
    if (await this.isInput(path))
      return `${path} is one of the inputs: name another file for the rejected games`;
    if (!(await isWritable(path))) return `cannot write ${path}: it is read-only`;
    return undefined;
  }

  /**
   * Why the default rejects file of an input could not be written: its folder is read-only (then it goes to
   * the working folder) and so is the working folder. Undefined when it can.
   */
  async problemWithDefault(input: string): Promise<string | undefined> {
    if ((await isWritable(dirname(resolve(input)))) || (await isWritable(this.workingFolder)))
      return undefined;
    return `the rejected games of ${input} would go to its folder or the working folder, and neither is writable: name a file with --rejects`;
  }

  /**
   * Opens the file for the rejects of `input`: `named` (--rejects), or by default `<input>.rejected.pgn`
   * beside it. A default file that the command wrote already, that is an input, or that is not a plain file
   * makes way for a free name (`<input>.rejected-2.pgn`, ...); when the input's folder is read-only, the file
   * goes to the working folder, under a name no file has yet (so does that of a pipe or device). Returns the
   * file and the path to report.
   */
  async open(input: string, named: string | undefined): Promise<{ file: FileHandle; path: string }> {
    if (named !== undefined) {
      const problem = await this.problemWith(named);
      if (problem) throw new Error(problem);
      const key = resolve(named);
      const file = await open(named, this.written.has(key) ? 'a' : 'w');
      this.written.add(key);
      return { file, path: named };
    }
    const beside = `${input}.rejected.pgn`;
    const folder = dirname(resolve(input));
    // A pipe or device (/dev/stdin) has no folder of its own to write into: the working folder then.
    const regular = (await stat(input).catch(() => null))?.isFile() ?? false;
    if (regular && (await isWritable(folder))) {
      const file =
        !this.written.has(resolve(beside)) && (await this.replaceable(beside))
          ? await replace(beside)
          : undefined;
      if (file) {
        this.written.add(resolve(beside));
        return { file, path: beside };
      }
      return this.claim(dirname(input), basename(input));
    }
    // Input folders may be read-only (a mounted archive, a shared corpus): the working folder then.
    return this.claim(this.workingFolder, basename(input));
  }

  /** An older rejects file beside the input is replaced; anything else there is kept. */
  private async replaceable(path: string): Promise<boolean> {
    const info = await lstat(path).catch(() => null);
    if (!info) return true;
    return info.isFile() && !(await this.isInput(path)) && (await isWritable(path));
  }

  /** Creates `<name>.rejected.pgn` in `folder`, or the first of `<name>.rejected-2.pgn`, ... that is free. */
  private async claim(folder: string, name: string): Promise<{ file: FileHandle; path: string }> {
    for (let n = 1; ; n++) {
      const path = join(folder, n === 1 ? `${name}.rejected.pgn` : `${name}.rejected-${n}.pgn`);
      try {
        const file = await open(path, 'wx'); // never an existing file, nor a link's target
        this.written.add(resolve(path));
        // In the working folder the path is absolute: the summary names the file wherever it was run.
        return { file, path: folder === this.workingFolder ? resolve(path) : path };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  }
}

/**
 * A new file in place of an older rejects file: the name is removed, then created exclusively. Opened as it
 * is, the name would be written through: a hard link that someone who may write into the input's folder (an
 * upload folder) puts there would take the rejected games, text that anyone may have written, into the file it
 * links, of the operator's (`~/.ssh/authorized_keys`), and so would a symbolic link put there after the
 * check. Undefined when the name cannot be had (something else took it meanwhile): a free name is claimed
 * instead.
 */
async function replace(path: string): Promise<FileHandle | undefined> {
  const taken = (error: unknown, codes: string[]) => {
    if (!codes.includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  };
  try {
    await unlink(path).catch((error: unknown) => taken(error, ['ENOENT']));
    return await open(path, 'wx');
  } catch (error) {
    taken(error, ['EEXIST', 'EISDIR', 'EPERM']); // a folder, or a file made meanwhile
    return undefined;
  }
}

/**
 * The rejects file could not be opened or written (a full disk, a folder made read-only meanwhile): named, as
 * the file system's own message ("ENOSPC: no space left on device, write") does not say which file.
 */
export class RejectsWriteError extends Error {
  /** The file (or where it would have gone, when it could not be opened). */
  readonly target: string;

  constructor(target: string, cause: unknown) {
    // "ENOSPC: no space left on device, write": the part before the system call's name.
    const message = cause instanceof Error ? cause.message : String(cause);
    const reason = (cause as NodeJS.ErrnoException).code ? (message.split(',')[0] ?? message) : message;
    super(`cannot write the rejected games to ${target} (${reason})`, { cause });
    this.target = target;
  }
}

/** The most characters of a text written at once. */
const WRITE_SLICE = 1 << 20;

/**
 * Of a game too large to check, the bytes of its text that the rejects file keeps (docs/import.md): enough
 * to see what it is, and a rejects file never grows by more than this (and a note) per such game.
 */
export const OVERSIZE_KEPT_BYTES = 1 << 20;

/** The first `bytes` bytes of the text in UTF-8, less a character they would split; and their length. */
function utf8Head(text: string, bytes: number): { head: string; length: number } {
  // No character is less than a byte: the first `bytes` characters hold the head.
  let slice = text.slice(0, bytes);
  const last = slice.charCodeAt(slice.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) slice = slice.slice(0, -1); // half of a pair
  const encoded = Buffer.from(slice);
  let end = Math.min(bytes, encoded.length);
  while (end > 0 && end < encoded.length && ((encoded[end] as number) & 0xc0) === 0x80) end--;
  return { head: encoded.toString('utf8', 0, end), length: end };
}

/** The rejected games of one input, written to the file RejectsFiles opens at the first of them. */
export class RejectsWriter {
  private readonly files: RejectsFiles;
  private readonly input: string;
  private readonly named: string | undefined;
  private out: Writable | null = null;
  private path: string | null = null;
  private failure: Error | null = null;
  /** Whether the game being written, in pieces, has CRLF line ends; undefined between games. */
  private crlf: boolean | undefined;
  /** Whether the text written of that game so far ends with a line end. */
  private pieceEndsLine = false;
  /** Of the game too large to check being written: the bytes of its text written, and those left out. */
  private keptBytes = 0;
  private leftOut = 0;

  constructor(files: RejectsFiles, input: string, named?: string) {
    this.files = files;
    this.input = input;
    this.named = named;
  }

  /** Writes a rejected game's text, whole. */
  async write(text: string): Promise<void> {
    await this.put(text, false);
  }

  /**
   * Writes a piece of a game too large to check (RawGame.part; `last`: the piece with `oversize`), whose
   * text goes on in the next write. Only its first OVERSIZE_KEPT_BYTES are written; what is left out, with
   * the `dropped` bytes that were never read as text (RawGame.dropped), is told on a line of its own after
   * them, a CUT_NOTE comment line. The blank line comes after the last piece.
   */
  async writeOversize(text: string, last: boolean, dropped = 0): Promise<void> {
    const room = OVERSIZE_KEPT_BYTES - this.keptBytes;
    if (room > 0 && text.length > 0) {
      const bytes = Buffer.byteLength(text);
      if (bytes <= room) {
        this.keptBytes += bytes;
        await this.put(text, true);
      } else {
        const { head, length } = utf8Head(text, room);
        this.keptBytes = OVERSIZE_KEPT_BYTES;
        this.leftOut += bytes - length;
        await this.put(head, true);
      }
    } else {
      this.leftOut += Buffer.byteLength(text);
    }
    if (!last) return;
    this.leftOut += dropped;
    const leftOut = this.leftOut;
    this.keptBytes = 0;
    this.leftOut = 0;
    if (leftOut === 0) return this.put('', false);
    const eol = this.crlf ? '\r\n' : '\n';
    const note =
      `${CUT_NOTE}: ${leftOut.toLocaleString('en-US')} more bytes of this game are left out ` +
      `(a rejects file keeps the first ${OVERSIZE_KEPT_BYTES / (1 << 20)} MB of a game too large to check)`;
    await this.put(`${this.pieceEndsLine ? '' : eol}${note}`, false);
  }

  /**
   * Writes text of a rejected game. `piece`: a piece of a game too large to hold (RawGame.part), whose text
   * goes on in the next write; the blank line comes after its last piece.
   */
  private async put(text: string, piece: boolean): Promise<void> {
    if (!this.out) {
      const { file, path } = await this.files.open(this.input, this.named).catch((error: unknown) => {
        throw new RejectsWriteError(
          this.named ?? `a file beside ${this.input} or in the working folder`,
          error,
        );
      });
      this.path = path;
      this.out = file.createWriteStream();
      // Kept for the next write or close to throw: an 'error' event without a listener ends the process.
      this.out.on('error', (error) => this.failed(error));
    }
    if (this.failure) throw this.failure;
    // A game's line ends are those of its first piece: the last may hold no line end to tell, or be empty.
    this.crlf ??= text.includes('\r\n');
    const endsLine = text === '' ? this.pieceEndsLine : text.endsWith('\n');
    const whole = piece ? text : withBlankLine(text, endsLine, this.crlf ? '\r\n' : '\n');
    this.pieceEndsLine = piece && endsLine;
    if (!piece) this.crlf = undefined;
    // Long texts in slices (never between the two halves of a character beyond U+FFFF, which would each be
    // written as U+FFFD): a game of tens of MB is never copied into one buffer.
    for (let at = 0; at < whole.length; ) {
      let end = Math.min(whole.length, at + WRITE_SLICE);
      const last = whole.charCodeAt(end - 1);
      if (end < whole.length && last >= 0xd800 && last <= 0xdbff) end--;
      const slice = at === 0 && end === whole.length ? whole : whole.slice(at, end);
      at = end;
      if (!this.out.write(slice)) {
        await once(this.out, 'drain').catch((error: unknown) => this.failed(error)); // on an 'error' meanwhile
        if (this.failure) throw this.failure;
      }
    }
  }

  /** Closes the file; returns its path, or null when nothing was rejected. */
  async close(): Promise<string | null> {
    if (!this.out) return null;
    this.out.end();
    await finished(this.out).catch((error: unknown) => this.failed(error));
    if (this.failure) throw this.failure;
    return this.path;
  }

  /** The first failure of the file, kept for the next write or close to throw. */
  private failed(error: unknown): void {
    this.failure ??= new RejectsWriteError(this.path ?? this.input, error);
  }
}

/**
 * Whether files may be written in `path` (a folder, or a file to replace). One without any write permission
 * bit counts as read-only even where access() says otherwise: root may write anywhere, but a folder or file
 * marked read-only is not ours.
 */
async function isWritable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return ((await stat(path)).mode & 0o222) !== 0;
  } catch {
    return false;
  }
}

/**
 * A game's text as the rejects file holds it: ending with a line break, then a blank line before the next
 * game, in the game's own line ends (CRLF in a CRLF file).
 */
function withBlankLine(text: string, endsLine: boolean, eol: string): string {
  return endsLine ? `${text}${eol}` : `${text}${eol}${eol}`;
}
