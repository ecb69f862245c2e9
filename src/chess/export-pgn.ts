// Writer for the PGN standard's export format (section 8 of the PGN standard):
// Seven Tag Roster first, other tags in ASCII order, one blank line, movetext wrapped below
// 80 columns, result terminator, final newline. Tag lines are never wrapped (a value cannot
// be split), so only they can be longer than 79 characters, besides a single comment word
// longer than a line, which gets a line of its own (with the words starting with '%' after
// it: no line starts with '%', an escape line).

import { Buffer } from 'node:buffer';
import { isStringOneByteRepresentation } from 'node:v8';
import type { MoveNode, MoveTree } from './tree.ts';

export const SEVEN_TAG_ROSTER = ['Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result'] as const;

const RESULTS = new Set(['1-0', '0-1', '1/2-1/2', '*']);
const ROSTER = new Set<string>(SEVEN_TAG_ROSTER);

/**
 * The game result written in the export (Result tag and terminator, which must agree).
 * The Result tag wins over a disagreeing terminator: it is the value users see in the tags
 * and the one tools fill in deliberately, while terminators are often a bare "*" in
 * truncated or live exports. An invalid tag value ("", "3/2") falls back to the terminator.
 */
export function exportResult(tags: Map<string, string>, terminator: string | undefined): string {
  const tag = tags.get('Result')?.trim();
  if (tag !== undefined && RESULTS.has(tag)) return tag;
  if (terminator !== undefined && RESULTS.has(terminator)) return terminator;
  return '*';
}

/**
 * Calls `visit` with each tag in export order, value as written: the Seven Tag Roster in its order
 * (missing ones filled with "?", Date "????.??.??", Result the export's), then the other tags in
 * ASCII order of names, collected and sorted only when there are any (many games have none).
 */
function eachExportTag(
  tags: Map<string, string>,
  result: string,
  visit: (name: string, value: string) => void,
): void {
  let rosterTags = 0;
  for (const name of SEVEN_TAG_ROSTER) {
    const tag = tags.get(name);
    if (tag !== undefined) rosterTags++;
    visit(name, name === 'Result' ? result : (tag ?? (name === 'Date' ? '????.??.??' : '?')));
  }
  if (tags.size === rosterTags) return;
  const others: string[] = [];
  for (const name of tags.keys()) {
    if (!ROSTER.has(name)) others.push(name);
  }
  others.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of others) visit(name, tags.get(name) as string);
}

/** Tags in export order (eachExportTag), as name-value pairs. */
export function exportTags(tags: Map<string, string>, result: string): [string, string][] {
  const out: [string, string][] = [];
  eachExportTag(tags, result, (name, value) => out.push([name, value]));
  return out;
}

/** Whether a tag value holds a character that escapeTagValue changes: CR, LF, backslash or quote. */
function needsEscape(value: string): boolean {
  // A loop: values are short, and a regular expression's call cost more than the scan.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 13 || c === 10 || c === 92 || c === 34) return true;
  }
  return false;
}

function escapeTagValue(value: string): string {
  if (!needsEscape(value)) return value; // nearly every value: nothing to do
  // Line breaks would end the tag line; the standard allows none in a value.
  const oneLine = /[\r\n]/.test(value) ? value.replace(/\r?\n|\r/g, ' ') : value;
  return oneLine.replace(/[\\"]/g, '\\$&');
}

const MAX_LINE = 79;

/** Thrown by a Latin-1 Wrapper at a character beyond U+00FF: the export is written again in UTF-16. */
const WIDE = new Error('a character beyond Latin-1');

/** Wrapper's buffer, from game to game (a game that needs more gets a larger one of its own). */
const SCRATCH = Buffer.allocUnsafeSlow(1 << 17);

/**
 * Accumulates movetext tokens and wraps them into lines of at most 79 characters. The characters go into a
 * buffer, as Latin-1 bytes or, in a game with a character beyond them, as UTF-16 code units, and a line ends
 * where a space in it becomes a line break; the text is made a string once, at the end. Lines made as
 * strings would cost a string or two per token, a piece per line and a copy of each comment
 * (docs/performance.md).
 */
class Wrapper {
  private buf = SCRATCH;
  /** The buffer's characters: bytes, or code units when `wide`. */
  private chars: Uint8Array | Uint16Array;
  private n = 0;
  /** Where the current line starts in `chars` (the line ends at `n`). */
  private lineStart = 0;
  /** Text glued to the front of the next token ('(' of a variation). */
  private prefix = '';
  private readonly wide: boolean;

  /** `head` and a line break, then the movetext. */
  constructor(head: string, wide: boolean) {
    this.wide = wide;
    this.chars = wide ? new Uint16Array(SCRATCH.buffer, 0, SCRATCH.length >> 1) : SCRATCH;
    this.reserve(head.length + 1);
    this.write(head);
    this.chars[this.n++] = 10;
    this.lineStart = this.n;
  }

  /** Makes room for `k` more characters. */
  private reserve(k: number): void {
    if (this.n + k <= this.chars.length) return;
    const length = Math.max(this.chars.length * 2, this.n + k);
    const grown = Buffer.allocUnsafeSlow(this.wide ? length * 2 : length);
    this.buf.copy(grown, 0, 0, this.wide ? this.n * 2 : this.n);
    this.buf = grown;
    this.chars = this.wide ? new Uint16Array(grown.buffer, 0, length) : grown;
  }

  /**
   * A long string (comment, tag lines), copied by Buffer's write: as Latin-1 only a string that V8 holds in one
   * byte a character, which is never wrong about it (a game's text held so, all its strings are).
   */
  private write(text: string): void {
    if (this.wide) this.n += this.buf.write(text, this.n * 2, 'utf16le') >> 1;
    else if (isStringOneByteRepresentation(text)) this.n += this.buf.write(text, this.n, 'latin1');
    else throw WIDE;
  }

  /** A short string (move, NAG, result), character by character. */
  private put(text: string): void {
    const chars = this.chars;
    const max = this.wide ? 0xffff : 0xff;
    let n = this.n;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c > max) throw WIDE;
      chars[n++] = c;
    }
    this.n = n;
  }

  /** The token `text` + `more` (a move number and its move: no string is made of the two). */
  token(text: string, more = ''): void {
    const prefix = this.prefix;
    this.prefix = '';
    const length = prefix.length + text.length + more.length;
    this.reserve(length + 1);
    const column = this.n - this.lineStart;
    if (column > 0) {
      if (column + 1 + length <= MAX_LINE) this.chars[this.n++] = 32;
      else {
        this.chars[this.n++] = 10;
        this.lineStart = this.n;
      }
    }
    this.put(prefix);
    this.put(text);
    this.put(more);
  }

  /**
   * Whether the space at `i` may become a line break: not before a '%', which in a line's first column starts
   * an escape line (PGN standard 6) that readers skip, the rest of the comment and its '}' with it.
   */
  private breakable(i: number): boolean {
    return this.chars[i] === 32 && this.chars[i + 1] !== 37;
  }

  /**
   * The comment `{text}`, wrapped at its spaces into the same lines as token() for each of its words (a line's
   * first word goes on it whatever its length, then the words that fit), so that long comments wrap. It is
   * written whole, after a space if the line has a token, then that space or the spaces where its lines end
   * become line breaks. A word that starts with '%' stays with the word before it (breakable).
   */
  comment(text: string): void {
    const prefix = this.prefix;
    this.prefix = '';
    this.reserve(prefix.length + text.length + 3);
    const chars = this.chars;
    const space = this.n > this.lineStart ? this.n++ : -1;
    const start = this.n;
    this.put(prefix);
    chars[this.n++] = 123; // '{'
    this.write(text);
    chars[this.n++] = 125; // '}'
    // Positions from here on are in `{text}` (with the prefix), which has spaces only in the text.
    const length = this.n - start;
    let pos = 0;
    if (space !== -1) {
      // After the line's tokens: as many words as fit after a space, else none.
      chars[space] = 32;
      const room = MAX_LINE - (space - this.lineStart) - 1;
      if (length <= room) return;
      let cut = Math.min(room, length - 2);
      while (cut > 0 && !this.breakable(start + cut)) cut--;
      if (cut > 0) pos = cut + 1;
      chars[cut > 0 ? start + cut : space] = 10;
      this.lineStart = start + pos;
    }
    // Lines of their own: the first word, then the words that fit.
    while (length - pos > MAX_LINE) {
      let first = pos;
      while (first < length && !this.breakable(start + first)) first++;
      if (first === length) return;
      let cut = Math.min(pos + MAX_LINE, length - 2);
      while (cut > first + 1 && !this.breakable(start + cut)) cut--;
      const end = cut > first + 1 ? cut : first;
      chars[start + end] = 10;
      pos = end + 1;
      this.lineStart = start + pos;
    }
  }

  open(text: string): void {
    this.prefix += text;
  }

  /** Glues text to the end of the previous token (')' of a variation). */
  close(text: string): void {
    this.reserve(text.length);
    if (this.n - this.lineStart + text.length > MAX_LINE) {
      // Move the last token to the next line together with the ')', if the line has more than one.
      let cut = this.n - 1;
      while (cut >= this.lineStart && !this.breakable(cut)) cut--;
      if (cut >= this.lineStart) {
        this.chars[cut] = 10;
        this.lineStart = cut + 1;
      }
    }
    this.put(text);
  }

  /** The text, with a final line break. */
  finish(): string {
    this.reserve(1);
    if (this.n > this.lineStart) this.chars[this.n++] = 10;
    // V8 holds the UTF-16 text in one byte a character too if it can (but a text over ~1M characters, which Node
    // makes an external string, as it is).
    return this.wide ? this.buf.toString('utf16le', 0, this.n * 2) : this.buf.toString('latin1', 0, this.n);
  }
}

/** "12. " and "12... ", made once for the first thousand moves (a number made a string per move). */
const WHITE_NUMBERS = Array.from({ length: 1000 }, (_, n) => `${n}. `);
const BLACK_NUMBERS = Array.from({ length: 1000 }, (_, n) => `${n}... `);

function writeLine(w: Wrapper, nodes: MoveNode[]): void {
  // A black move is numbered at the start of a line and after a comment, NAG or variation.
  let numberBlack = true;
  for (const node of nodes) {
    if (node.startComments) {
      for (const c of node.startComments) w.comment(c);
      numberBlack = true;
    }
    const n = node.moveNumber;
    if (node.white) w.token(WHITE_NUMBERS[n] ?? `${n}. `, node.san);
    else if (numberBlack) w.token(BLACK_NUMBERS[n] ?? `${n}... `, node.san);
    else w.token(node.san);
    numberBlack = false;
    if (node.nags) {
      for (const nag of node.nags) w.token(`$${nag}`);
      numberBlack = true;
    }
    if (node.comments) {
      for (const c of node.comments) w.comment(c);
      numberBlack = true;
    }
    if (node.variations) {
      for (const variation of node.variations) {
        w.open('(');
        writeLine(w, variation);
        w.close(')');
      }
      numberBlack = true;
    }
  }
}

/** The game in export format, ending with a newline. */
export function writeExportPgn(tags: Map<string, string>, tree: MoveTree, result: string): string {
  const head = writeTags(tags, result); // the tag lines end with a line break: a blank line follows
  try {
    return writeGame(new Wrapper(head, false), tree, result);
  } catch (err) {
    if (err !== WIDE) throw err;
  }
  return writeGame(new Wrapper(head, true), tree, result);
}

function writeGame(w: Wrapper, tree: MoveTree, result: string): string {
  for (const c of tree.comments) w.comment(c);
  writeLine(w, tree.moves);
  w.token(result);
  return w.finish();
}

/**
 * The tag lines of a game with no tags but Result (opening books, engine test positions: every tag "?"), per
 * export result: they are the same for all such games.
 */
const BARE_TAGS = new Map<string, string>();

/** The tag lines of the export, each ending with a newline: no list of pairs is made. */
function writeTags(tags: Map<string, string>, result: string): string {
  const bare = tags.size === 0 || (tags.size === 1 && tags.has('Result'));
  if (bare) {
    const known = BARE_TAGS.get(result);
    if (known !== undefined) return known;
  }
  let text = '';
  eachExportTag(tags, result, (name, value) => {
    text += `[${name} "${escapeTagValue(value)}"]\n`;
  });
  if (bare) BARE_TAGS.set(result, text);
  return text;
}
