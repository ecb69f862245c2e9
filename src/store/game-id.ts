// Game ids: time-ordered UUIDs, made fast enough for an import's every game.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';

// Random bytes for game ids, drawn for 1,024 milliseconds' ids at a time: asking the system for each id is a
// large share of an import's main thread on short games.
const ID_POOL_BYTES = 16 * 1024;
let idPool = new Uint8Array(0);
let idPoolAt = 0;
/** A game id's characters, written in place: the millisecond's part (the first 15) only when it changes. */
const ID_TEXT = Buffer.alloc(36);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
let lastMs = -1;
/** The last id's final 48 bits: the ids of one millisecond count up from a random start below 2^47. */
let counter = 0;

/** Writes the byte as two hex digits at `at` of ID_TEXT. */
function hexByte(at: number, byte: number): void {
  ID_TEXT[at] = HEX_DIGITS[byte >> 4] as number;
  ID_TEXT[at + 1] = HEX_DIGITS[byte & 15] as number;
}

/**
 * A new game's UUID, time-ordered (RFC 9562 version 7: 48 bits of Unix milliseconds, version 7, 74 random
 * bits, variant 10): the id index grows at its end, where a random UUID would dirty a page anywhere in it
 * for each new game and every commit would write all those pages again. Written here rather than with the
 * uuid package's v7(), which costs several times as much an id (its options, a copy of the bytes, a string
 * of 36 concatenations made lower case): this one writes the characters into a buffer and decodes them at
 * once, a flat string (a template literal makes a tree of strings that the slug's slice and SQLite's bind
 * then copy again).
 *
 * The ids of one millisecond (a batch takes thousands) keep their order too (RFC 9562 6.2, method 2): the
 * first has random bits, the next ones its last 48 bits plus one. So ids sort in the order this process
 * made them, which is the order of the games in the store (docs/design.md 12: oldest first, then id).
 */
export function gameId(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    const time = ms.toString(16).padStart(12, '0');
    ID_TEXT.write(`${time.slice(0, 8)}-${time.slice(8)}-7`, 0, 'latin1');
    if (idPoolAt === idPool.length) {
      idPool = randomBytes(ID_POOL_BYTES);
      idPoolAt = 0;
    }
    const r = idPool;
    const i = idPoolAt;
    idPoolAt += 16;
    ID_TEXT[15] = HEX_DIGITS[(r[i] as number) & 15] as number;
    hexByte(16, r[i + 1] as number);
    ID_TEXT[18] = 45; // '-'
    hexByte(19, ((r[i + 2] as number) & 0x3f) | 0x80);
    hexByte(21, r[i + 3] as number);
    ID_TEXT[23] = 45;
    // Below 2^47: the count cannot run past 48 bits within a millisecond.
    counter = ((r[i + 4] as number) & 0x7f) * 2 ** 40 + (r[i + 5] as number) * 2 ** 32 + readUint32(r, i + 6);
  } else counter++;
  const high = Math.floor(counter / 2 ** 24);
  const low = counter % 2 ** 24;
  hexByte(24, high >>> 16);
  hexByte(26, (high >>> 8) & 255);
  hexByte(28, high & 255);
  hexByte(30, low >>> 16);
  hexByte(32, (low >>> 8) & 255);
  hexByte(34, low & 255);
  return ID_TEXT.toString('latin1', 0, 36);
}

function readUint32(bytes: Uint8Array, at: number): number {
  return (
    (((bytes[at] as number) << 24) +
      ((bytes[at + 1] as number) << 16) +
      ((bytes[at + 2] as number) << 8) +
      (bytes[at + 3] as number)) >>>
    0
  );
}
