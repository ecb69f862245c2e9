// Node's zstd decompressor (24.x) decodes only the first of several frames given in one write, ends its output
// there, and drops the rest silently (nodejs/node#64741): a .zst of concatenated frames (cat a.zst b.zst, pzstd,
// zstd -B) would import its first frame's games and exit 0. Given one frame per write, it decodes them all. So
// the compressed bytes pass through this first, cut at frame ends (RFC 8878: a frame is a header, blocks, an
// optional checksum; a skippable frame, metadata, is dropped). Bytes that are no frame pass on as they are, for
// the decompressor to fail on.
import { Transform, type TransformCallback } from 'node:stream';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC = 0x184d2a50; // to 0x184d2a5f

type Expecting = 'frame' | 'block' | 'checksum';

export class ZstdFrames extends Transform {
  /** Bytes of a header not yet whole. */
  private carry = Buffer.alloc(0);
  /** Bytes of the current part (header, block, checksum, skippable frame) still to pass on or drop. */
  private left = 0;
  private skipping = false;
  private next: Expecting = 'frame';
  private checksum = false;
  /** After bytes that are no frame: everything passes on unchanged. */
  private opaque = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = Buffer.alloc(0);
    if (this.opaque) {
      done(null, bytes);
      return;
    }
    let piece = 0;
    let at = 0;
    while (at < bytes.length) {
      if (this.left > 0) {
        const taken = Math.min(this.left, bytes.length - at);
        at += taken;
        this.left -= taken;
        if (this.left > 0) break;
        if (this.skipping) {
          this.skipping = false;
          piece = at;
        } else if (this.next === 'frame' && at > piece) {
          this.push(bytes.subarray(piece, at)); // a frame's end: the next one in a write of its own
          piece = at;
        }
        continue;
      }
      const part = this.partAt(bytes, at);
      if (part === undefined) {
        this.carry = Buffer.from(bytes.subarray(at));
        break;
      }
      if (part < 0) {
        this.opaque = true;
        at = bytes.length;
        break;
      }
      if (this.skipping && at > piece) this.push(bytes.subarray(piece, at));
      this.left = part;
    }
    if (at > piece && !this.skipping) this.push(bytes.subarray(piece, at));
    done();
  }

  override _flush(done: TransformCallback): void {
    done(null, this.carry.length > 0 ? this.carry : undefined); // a cut-off header: the decompressor says so
  }

  /**
   * The length of the part at `at` (its header included), reading its header and setting what comes after;
   * undefined while the header is not whole, -1 for bytes that are no frame.
   */
  private partAt(bytes: Buffer, at: number): number | undefined {
    const have = bytes.length - at;
    if (this.next === 'checksum') {
      this.next = 'frame';
      return 4;
    }
    if (this.next === 'block') {
      if (have < 3) return undefined;
      const header = bytes.readUIntLE(at, 3);
      const last = (header & 1) === 1;
      const type = (header >> 1) & 3;
      if (last) this.next = this.checksum ? 'checksum' : 'frame';
      return 3 + (type === 1 ? 1 : header >>> 3); // an RLE block holds its one byte
    }
    if (have < 4) return undefined;
    const magic = bytes.readUInt32LE(at);
    if ((magic & 0xfffffff0) === SKIPPABLE_MAGIC) {
      if (have < 8) return undefined;
      this.skipping = true;
      return 8 + bytes.readUInt32LE(at + 4);
    }
    if (magic !== ZSTD_MAGIC) return -1;
    if (have < 5) return undefined;
    const descriptor = bytes[at + 4] as number;
    const singleSegment = (descriptor & 0x20) !== 0;
    const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][descriptor >> 6] as number;
    const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] as number;
    this.checksum = (descriptor & 4) !== 0;
    this.next = 'block';
    return 5 + (singleSegment ? 0 : 1) + dictionaryBytes + sizeBytes;
  }
}
