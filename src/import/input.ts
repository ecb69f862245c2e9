// The bytes an import reads: a PGN file's, or a gzip- or zstd-compressed one's decompressed as they come
// (node:zlib, constant memory; concatenated members or frames too). What is none of these is refused by its
// first bytes: read as PGN, a binary file (/bin/ls, a SQLite file) or another compression would make
// "games", each rejected, into a rejects file larger than the input, and the command would exit 0.
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { pipeline, type Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import { ZstdFrames } from './zstd-frames.ts';

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
/**
 * Compressed bytes read at most to check a compressed file's text before the import: a zstd block (up to 128 KB
 * of text) gives nothing until it is read whole, and is 128 KB compressed at most.
 */
const COMPRESSED_HEAD_BYTES = 256 << 10;
/** The most compressed bytes given to a decompressor at once (see inputBytes). */
const COMPRESSED_PIECE = 16 << 10;
/**
 * Text per compressed byte, at least, when the file does not say (PGN compresses more than that with gzip or
 * zstd: docs/performance.md): for the size-based decisions.
 */
const MIN_RATIO = 3;
/** The longest magic number of COMPRESSIONS (zstd's). */
const MAGIC_BYTES = 4;

/**
 * The compressions read, by their first bytes. zstd came in Node 22.15 and 23.8 (experimental in 24 too, no
 * warning printed): a Node without it refuses .zst files by REFUSED's entry below.
 */
const COMPRESSIONS: { magic: Buffer; name: string; decompressor: () => Transform[] }[] = [
  {
    magic: Buffer.from([0x1f, 0x8b]),
    name: 'gzip',
    decompressor: () => [zlib.createGunzip({ chunkSize: 1 << 20 })],
  },
  ...(typeof zlib.createZstdDecompress === 'function'
    ? [
        {
          magic: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]),
          name: 'zstd',
          decompressor: () => [new ZstdFrames(), zlib.createZstdDecompress({ chunkSize: 1 << 20 })],
        },
      ]
    : []),
];
type Compression = (typeof COMPRESSIONS)[number];

function compressionOf(head: Buffer): Compression | undefined {
  return COMPRESSIONS.find(({ magic }) => head.subarray(0, magic.length).equals(magic));
}
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
  // Read (COMPRESSIONS) where Node has zstd; refused on a Node without it, or inside another compression.
  { magic: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), what: 'zstd-compressed', tools: ['unzstd', 'zstdcat'] },
  {
    magic: Buffer.from([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]),
    what: 'a 7z archive: extract the PGN files from it',
  },
  { magic: /^(\xff\xfe|\xfe\xff)/, what: 'UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)' },
];

/** An input that is not PGN text, or a compressed file whose content is not (`is not PGN text: ...`, without the file). */
export class InputFormatError extends Error {}

/** The input could not be read on (a damaged or cut-off .gz or .zst file, a failing disk); the message names no file. */
export class InputReadError extends Error {}

/**
 * Why the start of an input (`head`, up to HEAD_BYTES; decompressed for a .gz or .zst) is not PGN text, if it
 * is not. `file`: the name of a regular file, for the command that pipes it decompressed.
 */
function problemOfText(head: Buffer, compressed: boolean, file?: string): string | undefined {
  const latin1 = head.toString('latin1', 0, 16);
  for (const { magic, what, tools } of REFUSED) {
    const found = magic instanceof RegExp ? magic.test(latin1) : head.subarray(0, magic.length).equals(magic);
    if (!found) continue;
    const [unpack, cat] = tools ?? [];
    const hint = !unpack
      ? ''
      : file && !compressed
        ? `: decompress it (${unpack}), or pipe it: ${cat} ${file} | chessport import /dev/stdin ...`
        : `: decompress it first (${unpack})`;
    return `${compressed ? 'holds ' : 'is '}${what}${hint}`;
  }
  const start = head.subarray(0, HEAD_BYTES);
  let controls = 0;
  for (const byte of start) if (byte < 0x20 && !TEXT_CONTROLS.has(byte)) controls++;
  if (controls >= Math.max(BINARY_MIN, start.length * BINARY_SHARE)) {
    return `is not PGN text${compressed ? ' once decompressed' : ''}: ${controls} of its first ${start.length} bytes are control characters (NUL and the like), as in binary files`;
  }
  return undefined;
}

/**
 * Why a regular file is not PGN text or compressed PGN text, told from its start (its first 8 KB, and for a
 * compressed file the first 8 KB of its text); undefined when it may be imported.
 */
export async function inputFormatProblem(file: string): Promise<string | undefined> {
  const handle = await open(file);
  let start: Buffer;
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
    start = head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const compression = compressionOf(start);
  if (!compression) return problemOfText(start, false, file);
  try {
    return problemOfText(await textStart(file, compression, HEAD_BYTES), true);
  } catch (error) {
    return `is ${compression.name}-compressed, but cannot be decompressed (${(error as Error).message})`;
  }
}

/**
 * The first `bytes` (or more) of a compressed file's text, from at most COMPRESSED_HEAD_BYTES of it plus
 * `bytes`: a bomb inflates no further. Fails only when not a byte of text comes out; a stream cut off by this
 * read, or damaged further on, gives what it gives (its import fails at the damage).
 */
function textStart(file: string, compression: Compression, bytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // In small reads: a decompressor passes on its text per read, and what a read held before damage is lost.
    const raw = createReadStream(file, {
      end: COMPRESSED_HEAD_BYTES + bytes - 1,
      highWaterMark: COMPRESSED_PIECE,
    });
    const stages = compression.decompressor();
    const text = stages.at(-1) as Transform;
    const chunks: Buffer[] = [];
    let length = 0;
    const done = () => {
      for (const stream of [raw, ...stages]) stream.destroy();
      resolve(Buffer.concat(chunks));
    };
    // 'data' gets every chunk made before an error: a stream destroyed by it drops those not yet read.
    text.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= bytes) done();
    });
    text.on('end', done);
    text.on('error', (error) => (length > 0 ? done() : reject(error)));
    pipeline([raw, ...stages], () => undefined); // text's error, or raw's passed on to it, is handled above
  });
}

/**
 * About how many bytes of text a regular file holds, and its first `sample` bytes of text: for the decisions
 * taken by size (workers, the checkpoint thread). For a compressed file, the larger of its size times
 * MIN_RATIO, what it says (a single-member .gz its text's size mod 2^32: ISIZE, its last 4 bytes) and the
 * text sampled.
 */
export async function textSize(file: string, sample: number): Promise<{ size: number; sample: Buffer }> {
  const { size } = await stat(file);
  const handle = await open(file);
  // At least the magic bytes, even when no text is sampled: they say whether the file is compressed.
  const head = Buffer.alloc(Math.min(size, Math.max(sample, MAGIC_BYTES)));
  const tail = Buffer.alloc(4);
  try {
    await handle.read(head, 0, head.length, 0);
    if (size >= 18) await handle.read(tail, 0, 4, size - 4);
  } finally {
    await handle.close();
  }
  const compression = compressionOf(head);
  if (!compression) return { size, sample: head.subarray(0, sample) };
  const said = compression.name === 'gzip' ? tail.readUInt32LE(0) : 0;
  const text = sample > 0 ? await textStart(file, compression, sample).catch(() => Buffer.alloc(0)) : head;
  return { size: Math.max(size * MIN_RATIO, said, text.length), sample: text.subarray(0, sample) };
}

function* pieces(chunk: Buffer): Generator<Buffer> {
  for (let at = 0; at < chunk.length; at += COMPRESSED_PIECE) yield chunk.subarray(at, at + COMPRESSED_PIECE);
}

/**
 * The input's bytes: decompressed for gzip and zstd, checked at the start as inputFormatProblem checks a file (a
 * pipe is checked only here). `onRead` gets the number of bytes of the file read so far (compressed ones): what
 * progress and ETA are measured by against its size. `signal` ends the reading at once.
 */
export async function* inputBytes(
  file: string,
  onRead: (bytes: number) => void,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const raw = createReadStream(file, { highWaterMark: 1 << 20, ...(signal && { signal }) });
  let read = 0;
  /** The compression read, for the message of a failure. */
  let name = '';
  /**
   * The raw bytes, counted as they are taken. A signal ends the wait for the next ones at once: a read of a
   * pipe or terminal with nothing to give (`chessport import /dev/stdin` typed at a terminal) blocks, and the
   * stream, destroyed, fails only once that read returns, so that Ctrl-C would wait for the writer's next
   * line.
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
    const compression = compressionOf(start);
    if (!compression) {
      const problem = problemOfText(start, false);
      if (problem) throw new InputFormatError(problem);
      if (start.length > 0) yield start;
      yield* source;
      return;
    }
    const stages = compression.decompressor();
    const text = stages.at(-1) as Transform;
    name = compression.name;
    // A failure on either side destroys both, and the loop below throws it; leaving the loop early ends both.
    // In pieces: a decompressor passes on its text per write, and a write's text before damage is lost with it
    // (docs/performance.md).
    pipeline(
      [
        (async function* () {
          yield* pieces(start);
          for await (const chunk of source) yield* pieces(chunk);
        })(),
        ...stages,
      ],
      () => undefined,
    );
    let first = true;
    for await (const chunk of text as AsyncIterable<Buffer>) {
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
    const what =
      code?.startsWith('Z_') || code?.startsWith('ZSTD_')
        ? `its ${name} data is damaged or cut off (${(error as Error).message})`
        : `it could not be read (${(error as Error).message})`;
    throw new InputReadError(what, { cause: error });
  } finally {
    raw.destroy();
  }
}
