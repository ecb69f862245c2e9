// Comment text as the parser keeps it (parse.ts) and the export writes it: whitespace runs collapsed to one
// space, '}' made safe. Most comments are clean already, and a long one is cleaned in proportion to its size.
import { Buffer } from 'node:buffer';
import { isStringOneByteRepresentation } from 'node:v8';

/**
 * Whitespace that cleanComment would change, besides a space at either end: any `\s` but the space, or two
 * spaces. Spelled out as a class, `\s` scans faster than in /[^\S ]| {2}|^ | $/ (docs/performance.md), and
 * engine games are mostly long comments.
 */
const NOT_CLEAN = /[\t\n\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}/;

/**
 * NOT_CLEAN or a '}': from a brace comment's first character, a match that ends with the '}' means that up to
 * it there are single spaces between other characters and no line break (two spaces end with a space).
 */
export const COMMENT_END = /[}\t\n\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}/g;

/** Whether cleanComment leaves the whitespace of `raw` as it is: single spaces between other characters. */
function isClean(raw: string): boolean {
  const n = raw.length;
  if (n > 0 && (raw.charCodeAt(0) === 32 || raw.charCodeAt(n - 1) === 32)) return false;
  return !NOT_CLEAN.test(raw);
}

/**
 * Comment text as stored and exported: whitespace runs collapsed to one space (the export
 * re-wraps lines, so line breaks cannot survive a round trip) and '}' made safe.
 */
export function cleanComment(raw: string): string {
  // Most comments (engine output, clock commands) are already clean: testing is much cheaper than rewriting.
  let text = isClean(raw)
    ? raw
    : raw.length > LONG_COMMENT
      ? collapseWhitespace(raw)
      : raw.replace(/\s+/g, ' ').trim();
  if (text.indexOf('}') !== -1) text = text.replace(/\}/g, ')');
  return text;
}

/**
 * Comments longer than this are cleaned by collapseWhitespace: V8's replace() of every whitespace run held
 * about 20 times the comment's size while it ran, a multiple a game of tens of MB of comments made into GBs.
 */
const LONG_COMMENT = 1 << 16;

/** Whether a character is JavaScript's `\s`. */
function isWhitespace(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * `raw.replace(/\s+/g, ' ').trim()` in the memory of its result and one buffer as large: the characters
 * are copied into a buffer (a byte each in a string V8 holds so, else two), a run of whitespace as one space.
 */
function collapseWhitespace(raw: string): string {
  const n = raw.length;
  const oneByte = isStringOneByteRepresentation(raw);
  const bytes = Buffer.allocUnsafeSlow(oneByte ? n : n * 2);
  const chars = oneByte ? bytes : new Uint16Array(bytes.buffer, bytes.byteOffset, n);
  let out = 0;
  let space = false;
  for (let i = 0; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (isWhitespace(c)) {
      space = out > 0;
      continue;
    }
    if (space) chars[out++] = 32;
    space = false;
    chars[out++] = c;
  }
  return oneByte ? bytes.toString('latin1', 0, out) : bytes.toString('utf16le', 0, out * 2);
}
