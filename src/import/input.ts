// The bytes an import reads: a PGN file's, or a gzip-compressed one's decompressed as they come (node:zlib,
// constant memory; members of a concatenated .gz too). What is neither is refused by its first bytes: a
// binary file (/bin/ls, a SQLite file) or another compression was read as "games", each rejected, into a
// rejects file larger than the input, and the command exited 0.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import { constants, createGunzip, gunzipSync } from 'node:zlib';

/**
 * How much of the start of an input tells what it is. A binary file is one where at least 1 byte in 20 there is
 * a control character that text does not use (NUL and the like; not tab, line ends, form feed or ESC): in
 * executables and databases (mostly NULs), UTF-16 text (half of it) and compressed or random data (1 in 10),
 * and 16 at least. A stray NUL in a PGN file, which rejects its game alone, does not make the file binary.
 */
const HEAD_BYTES = 8192;
const BINARY_SHARE = 1 / 20;
/** And at least so many: a few stray controls in a file of a few bytes are no binary file either. */
const BINARY_MIN = 16;
/** Compressed bytes inflated to check a regular .gz file's text before the import (at most ~4 MB of text). */
const GZIP_HEAD_BYTES = 4096;

const GZIP = Buffer.from([0x1f, 0x8b]);
/** Control characters that text may hold: tab, LF, VT, FF, CR, ESC. */
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b]);

/** Formats that are no PGN text, told by their first bytes; for compressions, the tools that undo them. */
const REFUSED: { magic: Buffer | RegExp; what: string; tools?: [unpack: string, cat: string] }[] = [
  { magic: Buffer.from('PK\x03\x04', 'latin1'), what: 'a zip archive: extract the PGN files from it' },
  { magic: Buffer.from('PK\x05\x06', 'latin1'), what: 'an empty zip archive' },
  { magic: /^BZh[1-9]1AY&SY/, what: 'bzip2-compressed', tools: ['bunzip2', 'bzcat'] },
  {
    magic: Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]),
    what: 'xz-compressed',
    tools: ['unxz', 'xzcat'],
  },
  { magic: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), what: 'zstd-compressed', tools: ['unzstd', 'zstdcat'] },
  {
    magic: Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]),
    what: 'a 7z archive: extract the PGN files from it',
  },
  { magic: /^(\xff\xfe|\xfe\xff)/, what: 'UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)' },
];

/** An input that is not PGN text, or a .gz file whose content is not (`is not PGN text: ...`, without the file). */
export class InputFormatError extends Error {}

/** The input could not be read on (a damaged or cut-off .gz file, a failing disk); the message names no file. */
export class InputReadError extends Error {}

/**
 * Why the start of an input (`head`, up to HEAD_BYTES; decompressed for a .gz) is not PGN text, if it is not.
 * `file`: the name of a regular file, for the command that pipes it decompressed.
 */
function problemOfText(head: Buffer, gzip: boolean, file?: string): string | undefined {
  const latin1 = head.toString('latin1', 0, 16);
  for (const { magic, what, tools } of REFUSED) {
    const found = magic instanceof RegExp ? magic.test(latin1) : head.subarray(0, magic.length).equals(magic);
    if (!found) continue;
    const [unpack, cat] = tools ?? [];
    const hint = !unpack
      ? ''
      : file && !gzip
        ? `: decompress it (${unpack}), or pipe it: ${cat} ${file} | chessport import /dev/stdin ...`
        : `: decompress it first (${unpack})`;
    return `${gzip ? 'holds ' : 'is '}${what}${hint}`;
  }
  const start = head.subarray(0, HEAD_BYTES);
  let controls = 0;
  for (const byte of start) if (byte < 0x20 && !TEXT_CONTROLS.has(byte)) controls++;
  if (controls >= Math.max(BINARY_MIN, start.length * BINARY_SHARE)) {
    return `is not PGN text${gzip ? ' once decompressed' : ''}: ${controls} of its first ${start.length} bytes are control characters (NUL and the like), as in binary files`;
  }
  return undefined;
}

/**
 * Why a regular file is not PGN text or gzip-compressed PGN text, told from its start (its first 8 KB, and for a
 * .gz the text its first 4 KB inflate to); undefined when it may be imported.
 */
export async function inputFormatProblem(file: string): Promise<string | undefined> {
  const handle = await open(file);
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
    const start = head.subarray(0, bytesRead);
    if (!isGzip(start)) return problemOfText(start, false, file);
    let text: Buffer;
    try {
      // A cut-off stream inflates as far as it goes; a gzip bomb's first 4 KB make at most ~4 MB.
      text = gunzipSync(start.subarray(0, GZIP_HEAD_BYTES), { finishFlush: constants.Z_SYNC_FLUSH });
    } catch (error) {
      return `is gzip-compressed, but cannot be decompressed (${(error as Error).message})`;
    }
    return problemOfText(text, true);
  } finally {
    await handle.close();
  }
}

function isGzip(head: Buffer): boolean {
  return head.subarray(0, 2).equals(GZIP);
}

/**
 * The input's bytes: decompressed for gzip, checked at the start as inputFormatProblem checks a file (a pipe is
 * checked only here). `onRead` gets the number of bytes of the file read so far (compressed, for a .gz): what
 * progress and ETA are measured by against its size. `signal` ends the reading at once.
 */
export async function* inputBytes(
  file: string,
  onRead: (bytes: number) => void,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const raw = createReadStream(file, { highWaterMark: 1 << 20, ...(signal && { signal }) });
  let read = 0;
  /**
   * The raw bytes, counted as they are taken. A signal ends the wait for the next ones at once: a read of a
   * pipe or terminal with nothing to give (`chessport import /dev/stdin` typed at a terminal) blocks, and the
   * stream, destroyed, fails only once that read returns, so that Ctrl-C waited for the writer's next line.
   */
  async function* counted(): AsyncGenerator<Buffer> {
    const chunks = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let stop: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      stop = () => reject(signal?.reason);
    });
    stopped.catch(() => undefined); // observed by the race below, if at all
    signal?.addEventListener('abort', stop as () => void, { once: true });
    if (signal?.aborted) stop?.();
    try {
      while (true) {
        const next = await Promise.race([chunks.next(), stopped]);
        if (next.done) return;
        read += next.value.length;
        onRead(read);
        yield next.value;
      }
    } finally {
      signal?.removeEventListener('abort', stop as () => void);
    }
  }
  try {
    const source = counted();
    // The first bytes say what the input is: at least HEAD_BYTES of them (a pipe gives less at a time), or all.
    const head: Buffer[] = [];
    let headLength = 0;
    while (headLength < HEAD_BYTES) {
      const next = await source.next();
      if (next.done) break;
      head.push(next.value);
      headLength += next.value.length;
    }
    const start = Buffer.concat(head);
    if (!isGzip(start)) {
      const problem = problemOfText(start, false);
      if (problem) throw new InputFormatError(problem);
      if (start.length > 0) yield start;
      yield* source;
      return;
    }
    const gunzip = createGunzip({ chunkSize: 1 << 20 });
    // A failure on either side destroys both, and the loop below throws it; leaving the loop early ends both.
    pipeline(
      (async function* () {
        yield start;
        yield* source;
      })(),
      gunzip,
      () => undefined,
    );
    let first = true;
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      if (first) {
        const problem = problemOfText(chunk, true);
        if (problem) throw new InputFormatError(problem);
        first = false;
      }
      yield chunk;
    }
  } catch (error) {
    if (error instanceof InputFormatError || (error as Error).name === 'AbortError') throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const what = code?.startsWith('Z_')
      ? `its gzip data is damaged or cut off (${(error as Error).message})`
      : `it could not be read (${(error as Error).message})`;
    throw new InputReadError(what, { cause: error });
  } finally {
    raw.destroy();
  }
}
