// Bytes to text for PGN input (DESIGN.md "Import"): UTF-8 with or without BOM, Latin-1 where a line is not
// valid UTF-8. Decided per line, not per file, because concatenated collections mix both (pgnmentor). Lines
// end with LF (or CRLF); a file whose lines end with a lone CR (old Mac OS) is read with LF for them.
import { isUtf8 } from 'node:buffer';

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * A line that is not valid UTF-8: its valid UTF-8 sequences as UTF-8, every other byte as Latin-1. Written
 * by hand since no decoder falls back per byte (TextDecoder replaces bad bytes with U+FFFD; decoding the
 * whole line as Latin-1 garbled a UTF-8 name next to a Latin-1 one). Sequences as the WHATWG decoder takes
 * them: no overlong forms, surrogates or values above U+10FFFF.
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

/** A block of whole lines (each ending with `eol`, but maybe the last) as text, lines ending with LF. */
function decodeBlock(block: Buffer, eol: number): string {
  let text: string;
  if (isUtf8(block)) text = block.toString('utf8');
  else {
    // Rare slow path: only the offending lines fall back to Latin-1.
    text = '';
    let start = 0;
    while (start < block.length) {
      let end = block.indexOf(eol, start);
      end = end === -1 ? block.length : end + 1;
      const line = block.subarray(start, end);
      text += isUtf8(line) ? line.toString('utf8') : decodeMixedLine(line);
      start = end;
    }
  }
  if (eol === CR) text = text.replaceAll('\r', '\n');
  // A BOM at the start of a line is what joining files that begin with one leaves (cat a.pgn b.pgn): it is
  // no text (a tag line after it was read as movetext). A one-byte string cannot hold U+FEFF: no scan then.
  if (text.includes('\uFEFF')) text = text.replace(/(^|\n)\uFEFF+/g, '$1');
  return text;
}

/**
 * The byte that ends lines, once `chunk` shows it: LF, or CR for a file whose first line break is a CR
 * without an LF after it; undefined while the chunk holds no line break (or only a CR at its very end).
 */
function lineEnd(chunk: Buffer): number | undefined {
  const lf = chunk.indexOf(LF);
  const cr = chunk.indexOf(CR);
  if (cr === -1 || (lf !== -1 && lf < cr)) return lf === -1 ? undefined : LF;
  if (cr + 1 === chunk.length) return undefined;
  return chunk[cr + 1] === LF ? LF : CR;
}

/** Decodes a byte stream into text chunks that always end at a line boundary (except the last). */
export async function* decodePgnStream(source: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let pending: Buffer = Buffer.alloc(0);
  let first = true;
  let eol: number | undefined;
  for await (const piece of source) {
    let chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    if (first) {
      if (chunk.length < 3 && pending.length + chunk.length < 3) {
        pending = Buffer.concat([pending, chunk]);
        continue;
      }
      chunk = Buffer.concat([pending, chunk]);
      pending = Buffer.alloc(0);
      if (chunk.subarray(0, 3).equals(BOM)) chunk = chunk.subarray(3);
      first = false;
    }
    if (eol === undefined) {
      eol = lineEnd(pending.length ? Buffer.concat([pending, chunk]) : chunk);
      if (eol === undefined) {
        pending = Buffer.concat([pending, chunk]);
        continue;
      }
    }
    const lastEol = chunk.lastIndexOf(eol);
    if (lastEol === -1) {
      pending = Buffer.concat([pending, chunk]);
      continue;
    }
    const block = pending.length
      ? Buffer.concat([pending, chunk.subarray(0, lastEol + 1)])
      : chunk.subarray(0, lastEol + 1);
    pending = Buffer.from(chunk.subarray(lastEol + 1));
    yield decodeBlock(block, eol);
  }
  if (first && pending.subarray(0, 3).equals(BOM)) pending = pending.subarray(3);
  if (pending.length) yield decodeBlock(pending, eol ?? LF);
}
