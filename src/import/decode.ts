// Bytes to text for PGN input (docs/design.md "Import"): UTF-8 with or without BOM, Latin-1 where a line is not
// valid UTF-8. Decided per line, not per file, because concatenated collections mix both (pgnmentor). Lines
// end with LF, CRLF or a lone CR (old Mac OS), also mixed in one file; a lone CR is read as LF. A line past a
// limit is never held whole: it is read to its end, its start alone decoded (LongLine).
import { constants, isUtf8 } from 'node:buffer';
import type { LongLine } from '../chess/types.ts';

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const EMPTY = Buffer.alloc(0);

/**
 * A line that is not valid UTF-8: its valid UTF-8 sequences as UTF-8, every other byte as Latin-1. Written
 * by hand since no decoder falls back per byte (TextDecoder replaces bad bytes with U+FFFD; decoding the
 * whole line as Latin-1 would garble a UTF-8 name next to a Latin-1 one). Sequences as the WHATWG decoder
 * takes them: no overlong forms, surrogates or values above U+10FFFF.
 */
function decodeMixedLine(line: Buffer): string {
  let text = '';
  let run = 0; // start of the current run of valid UTF-8
  let i = 0;
  while (i < line.length) {
    const b = line[i] as number;
    const length =
      b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let valid = length > 0 && i + length <= line.length;
    if (valid && length > 1) {
      // The second byte's range depends on the first (RFC 3629 section 4); the others are 80..BF.
      const second = line[i + 1] as number;
      const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
      const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
      valid = second >= low && second <= high;
      for (let k = 2; valid && k < length; k++) valid = ((line[i + k] as number) & 0xc0) === 0x80;
    }
    if (valid) {
      i += length;
      continue;
    }
    text += line.toString('utf8', run, i) + String.fromCharCode(b);
    i++;
    run = i;
  }
  return text + line.toString('utf8', run, i);
}

/** A lone CR: a line end of old Mac OS files, also within a file whose other lines end with LF or CRLF. */
const LONE_CR = /\r(?!\n)/g;

/** A block of whole lines (each ending with LF, CRLF or a lone CR, but maybe the last) as text, lone CRs as LF. */
function decodeBlock(block: Buffer): string {
  let text: string;
  if (isUtf8(block)) text = block.toString('utf8');
  else {
    // Rare slow path: only the offending lines fall back to Latin-1 (a lone CR ends no line here, which
    // changes nothing: the bytes decode alike).
    text = '';
    let start = 0;
    while (start < block.length) {
      let end = block.indexOf(LF, start);
      end = end === -1 ? block.length : end + 1;
      const line = block.subarray(start, end);
      text += isUtf8(line) ? line.toString('utf8') : decodeMixedLine(line);
      start = end;
    }
  }
  // Decided per line, as the encoding is: joined files mix line ends. The scan runs only where a CR is.
  if (text.includes('\r')) text = text.replace(LONE_CR, '\n');
  // A BOM at the start of a line is what joining files that begin with one leaves (cat a.pgn b.pgn): it is
  // no text (a tag line after it would be read as movetext). A one-byte string cannot hold U+FEFF: no scan
  // then.
  if (text.includes('\uFEFF')) text = text.replace(/(^|\n)\uFEFF+/g, '$1');
  return text;
}

/**
 * Where the chunk's last line ends (the index of its LF or lone CR), or -1. A CR as the chunk's last byte
 * does not count: an LF may follow in the next chunk.
 */
function lastLineEnd(chunk: Buffer): number {
  const lf = chunk.lastIndexOf(LF);
  let cr = chunk.lastIndexOf(CR);
  if (cr === chunk.length - 1) cr = cr === 0 ? -1 : chunk.lastIndexOf(CR, cr - 1); // (a negative start counts from the end)
  return Math.max(lf, cr);
}

/**
 * Where the chunk's first line ends (the index of its LF, or of its lone CR), in a chunk that lastLineEnd
 * found a line end in: a CR there is never the chunk's last byte, so the byte after it says what it is.
 */
function firstLineEnd(chunk: Buffer): number {
  const lf = chunk.indexOf(LF);
  const cr = lf === -1 ? chunk.indexOf(CR) : chunk.subarray(0, lf).indexOf(CR);
  if (cr === -1) return lf;
  return chunk[cr + 1] === LF ? cr + 1 : cr; // CRLF, or a lone CR
}

/**
 * A line read to its end while only its head is kept: the head, the bytes read of the line so far (the
 * line end's too), and whether the last of them is a CR (an LF may follow: CRLF).
 */
interface LongLineRead {
  head: Buffer;
  bytes: number;
  cr: boolean;
}

/**
 * The first `size` bytes of the parts joined (all of them hold more), less the start of a character that
 * the cut would split.
 */
function headOf(parts: Buffer[], size: number): Buffer {
  // One byte more: whether it is a UTF-8 continuation byte says whether the cut splits a character.
  const bytes = Buffer.concat(parts, size + 1);
  let end = size;
  while (end > size - 3 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

/** The long line read, `lineEnd` of its bytes being its line end: its head decoded. */
function longLine(read: LongLineRead, lineEnd: number): LongLine {
  const bytes = read.bytes - lineEnd;
  return { head: decodeBlock(read.head), bytes, dropped: bytes - read.head.length };
}

export interface DecodeOptions {
  /**
   * The longest line decoded, in bytes without its line end: a longer one is never held whole, but read to
   * its end and given as a LongLine of its first headBytes. Default: no limit; a limit is at most V8's longest
   * string (constants.MAX_STRING_LENGTH).
   */
  maxLineBytes?: number;
  /** Of a line longer than maxLineBytes, how many bytes are decoded (default 1 MB, at most maxLineBytes). */
  headBytes?: number;
}

/**
 * Decodes a byte stream into text chunks that always end at a line boundary (except the last). `onBlock` is told
 * the bytes of each chunk before it is yielded: the bytes taken from `source` may run a chunk ahead of them.
 * With maxLineBytes, a longer line comes as a LongLine of its start.
 */
export function decodePgnStream(
  source: AsyncIterable<Buffer | string>,
  onBlock?: (bytes: number) => void,
): AsyncGenerator<string>;
export function decodePgnStream(
  source: AsyncIterable<Buffer | string>,
  onBlock: ((bytes: number) => void) | undefined,
  options: DecodeOptions,
): AsyncGenerator<string | LongLine>;
export async function* decodePgnStream(
  source: AsyncIterable<Buffer | string>,
  onBlock: (bytes: number) => void = () => undefined,
  options: DecodeOptions = {},
): AsyncGenerator<string | LongLine> {
  // With a limit, no line longer than V8's longest string is decoded whole: it could not be.
  const maxLine =
    options.maxLineBytes === undefined
      ? Number.POSITIVE_INFINITY
      : Math.min(options.maxLineBytes, constants.MAX_STRING_LENGTH);
  const headBytes = Math.min(options.headBytes ?? 1 << 20, maxLine);
  let pending: Buffer = EMPTY;
  /**
   * Pieces after `pending` that hold no line end, joined to it once one comes: joined as they come, a long
   * line would be copied again with each piece, in quadratic time (docs/performance.md).
   */
  let more: Buffer[] = [];
  let moreBytes = 0;
  /** A line longer than maxLine, being read to its end. */
  let long: LongLineRead | undefined;
  /** The line in `parts` (`bytes` long, `endBytes` of them its line end): decoded, or its head when too long. */
  const lineOf = (parts: Buffer[], bytes: number, endBytes: number): string | LongLine => {
    if (bytes - endBytes > maxLine)
      return longLine({ head: headOf(parts, headBytes), bytes, cr: false }, endBytes);
    const line = decodeBlock(Buffer.concat(parts, bytes));
    parts.length = 0;
    return line;
  };
  let first = true;
  // A line is measured as its pieces pile up: no piece may hold a line too long on its own.
  for await (const piece of Number.isFinite(maxLine) ? piecesOf(source, maxLine) : source) {
    let chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    if (first) {
      if (chunk.length < 3 && pending.length + chunk.length < 3) {
        pending = Buffer.concat([pending, chunk]);
        continue;
      }
      chunk = Buffer.concat([pending, chunk]);
      pending = EMPTY;
      if (chunk.subarray(0, 3).equals(BOM)) chunk = chunk.subarray(3);
      first = false;
    }
    if (long) {
      if (chunk.length === 0) continue;
      // Where the line ends: at a CR that ended the last piece (with the LF starting this one: CRLF), or at
      // the first LF or CR here (a CR ending the piece may be followed by an LF).
      let at: number;
      let lineEnd: number;
      if (long.cr) {
        lineEnd = chunk[0] === LF ? 2 : 1;
        at = lineEnd - 1;
      } else {
        const lf = chunk.indexOf(LF);
        const cr = (lf === -1 ? chunk : chunk.subarray(0, lf)).indexOf(CR);
        const end = cr === -1 ? lf : cr;
        if (end === -1 || (end === cr && cr === chunk.length - 1)) {
          long.bytes += chunk.length;
          long.cr = end !== -1;
          continue;
        }
        lineEnd = chunk[end] === CR && chunk[end + 1] === LF ? 2 : 1;
        at = end + lineEnd;
      }
      long.bytes += at;
      onBlock(long.bytes);
      yield longLine(long, lineEnd);
      long = undefined;
      chunk = chunk.subarray(at);
    }
    if (
      (pending.length > 0 || more.length > 0) &&
      chunk.length > 0 &&
      chunk[0] !== LF &&
      lastByte(pending, more) === CR
    ) {
      // The last piece ended with a CR, and no LF follows: a lone CR, which ended the line.
      const parts = [pending, ...more];
      const bytes = pending.length + moreBytes;
      pending = EMPTY;
      more = [];
      moreBytes = 0;
      onBlock(bytes);
      yield lineOf(parts, bytes, 1);
    }
    const end = lastLineEnd(chunk);
    if (end === -1) {
      more.push(chunk);
      moreBytes += chunk.length;
      // Past the longest line (a CR at the end may be its line end): only its head is kept from here on.
      const cr = chunk.length > 0 && chunk[chunk.length - 1] === CR;
      if (pending.length + moreBytes - (cr ? 1 : 0) > maxLine) {
        long = { head: headOf([pending, ...more], headBytes), bytes: pending.length + moreBytes, cr };
        pending = EMPTY;
        more = [];
        moreBytes = 0;
      }
      continue;
    }
    let start = 0;
    if (pending.length > 0 || more.length > 0) {
      // The line begun in the previous chunks is completed on its own: joining it to the whole chunk would copy
      // every byte of the input once more (docs/performance.md). Its pieces are joined in one copy, and
      // neither they nor the copy are held once it is text: a long line is held as its text only while the
      // splitter reads it.
      const lineEnd = firstLineEnd(chunk);
      start = lineEnd + 1;
      const before = lineEnd > 0 ? chunk[lineEnd - 1] : lastByte(pending, more);
      const endBytes = chunk[lineEnd] === LF && before === CR ? 2 : 1;
      const parts = [pending, ...more, chunk.subarray(0, start)];
      const bytes = pending.length + moreBytes + start;
      pending = EMPTY;
      more = [];
      moreBytes = 0;
      onBlock(bytes);
      yield lineOf(parts, bytes, endBytes);
    }
    pending = Buffer.from(chunk.subarray(end + 1));
    if (start <= end) {
      onBlock(end + 1 - start);
      yield decodeBlock(chunk.subarray(start, end + 1));
    }
  }
  if (long) {
    onBlock(long.bytes);
    yield longLine(long, long.cr ? 1 : 0);
    return;
  }
  if (more.length > 0) pending = Buffer.concat([pending, ...more]);
  if (first && pending.subarray(0, 3).equals(BOM)) pending = pending.subarray(3);
  if (pending.length) {
    onBlock(pending.length);
    yield decodeBlock(pending);
  }
}

/** The source's pieces, cut where longer than `most` bytes. */
async function* piecesOf(source: AsyncIterable<Buffer | string>, most: number): AsyncGenerator<Buffer> {
  for await (const piece of source) {
    const bytes = typeof piece === 'string' ? Buffer.from(piece) : piece;
    if (bytes.length <= most) yield bytes;
    else for (let at = 0; at < bytes.length; at += most) yield bytes.subarray(at, at + most);
  }
}

/** The last byte of `pending` and the pieces after it, or undefined when they hold none. */
function lastByte(pending: Buffer, more: Buffer[]): number | undefined {
  for (let i = more.length - 1; i >= 0; i--) {
    const piece = more[i] as Buffer;
    if (piece.length > 0) return piece[piece.length - 1];
  }
  return pending[pending.length - 1];
}
