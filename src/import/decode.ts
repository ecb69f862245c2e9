// Bytes to text for PGN input (DESIGN.md "Import"): UTF-8 with or without BOM, Latin-1 where a line is not
// valid UTF-8. Decided per line, not per file, because concatenated collections mix both (pgnmentor).
import { isUtf8 } from 'node:buffer';

const NEWLINE = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function decodeBlock(block: Buffer): string {
  if (isUtf8(block)) return block.toString('utf8');
  // Rare slow path: only the offending lines fall back to Latin-1.
  let text = '';
  let start = 0;
  while (start < block.length) {
    let end = block.indexOf(NEWLINE, start);
    end = end === -1 ? block.length : end + 1;
    const line = block.subarray(start, end);
    text += isUtf8(line) ? line.toString('utf8') : line.toString('latin1');
    start = end;
  }
  return text;
}

/** Decodes a byte stream into text chunks that always end at a line boundary (except the last). */
export async function* decodePgnStream(source: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let pending: Buffer = Buffer.alloc(0);
  let first = true;
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
    const lastNewline = chunk.lastIndexOf(NEWLINE);
    if (lastNewline === -1) {
      pending = Buffer.concat([pending, chunk]);
      continue;
    }
    const block = pending.length
      ? Buffer.concat([pending, chunk.subarray(0, lastNewline + 1)])
      : chunk.subarray(0, lastNewline + 1);
    pending = Buffer.from(chunk.subarray(lastNewline + 1));
    yield decodeBlock(block);
  }
  if (first && pending.subarray(0, 3).equals(BOM)) pending = pending.subarray(3);
  if (pending.length) yield decodeBlock(pending);
}
