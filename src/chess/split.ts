// Streaming splitter: cuts decoded PGN text into the original texts of single games.
//
// It only tracks what decides where a game ends (tag lines, brace comments, parenthesis
// depth, result terminators); parsing and checking moves is normalize.ts's job. Memory is
// bounded by the current game plus one partial line.
//
// Rules, in order of precedence (each one is backed by a corpus file, see test/chess):
// - A line starting with '%' is an escape line; a line whose first non-blank character is
//   ';' is a comment line. Outside a game both belong to the text of the next game.
// - A line starting with '[' outside a brace comment starts a new game if the current game
//   has had movetext (moves, comments or a result terminator); while the current game has
//   only tags, it starts a new game only if it follows a blank line and repeats a tag name
//   of the current game (tag-only games, e.g. lichess broadcast exports), so blank lines
//   inside a tag section
//   (ChessBase) or two blank lines before the movetext (pgnmentor) do not split a game.
// - Movetext after a result terminator at parenthesis depth 0 starts a new game (games
//   without tags, one per line; garbage between games becomes a game of its own, which
//   normalizeGame then rejects with a reason).
// - Movetext whose line starts with move number 1 after a blank line starts a new game
//   even without a terminator (tag-less games separated only by a blank line).
// - Inside a brace comment, lines starting with '[' (e.g. "[%clk 0:01:00]") are comment
//   text. Only a complete tag pair line after a blank line closes a runaway comment, so an
//   unbalanced '{' cannot swallow the rest of a file.

import type { RawGame } from './types.ts';

const BOM = '\uFEFF';

const CH_TAB = 9;
const CH_SPACE = 32;
const CH_CR = 13;
const CH_LBRACE = 123;
const CH_RBRACE = 125;
const CH_LPAREN = 40;
const CH_RPAREN = 41;
const CH_SEMI = 59;
const CH_LBRACKET = 91;
const CH_RBRACKET = 93;
const CH_QUOTE = 34;
const CH_BACKSLASH = 92;
const CH_PERCENT = 37;

/** A complete tag pair on a line of its own; used to end a runaway brace comment. */
const TAG_LINE = /^\s*\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+"(?:[^"\\]|\\.)*"\]\s*$/;
/** A movetext line that starts with move number 1 ("1.", "1...", "1. e4"). */
const FIRST_MOVE_LINE = /^\s*1\s*\./;
/** What scanMovetext must look at: comments, variations, ';' comments. */
const MOVETEXT_SPECIALS = /[{}();]/;
/** A result terminator as a token of its own (between the blanks of isSpace). */
const TERMINATOR_TOKEN = /(?:^|[\t\n\v\f\r ])(?:1-0|0-1|1\/2-1\/2|\*)(?=[\t\n\v\f\r ]|$)/;

function isSpace(c: number): boolean {
  return c === CH_SPACE || c === CH_TAB || c === CH_CR || c === 10 || c === 11 || c === 12;
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    if (!isSpace(line.charCodeAt(i))) return false;
  }
  return true;
}

function isTerminator(line: string, start: number, end: number): boolean {
  const len = end - start;
  if (len === 1) return line.charCodeAt(start) === 42; // '*'
  if (len === 3) {
    const t = line.slice(start, end);
    return t === '1-0' || t === '0-1';
  }
  return len === 7 && line.slice(start, end) === '1/2-1/2';
}

export class PgnSplitter {
  /** Incomplete last line of the input so far. */
  private partial = '';
  /** Number of complete lines consumed. */
  private lineNo = 0;
  private started = false;
  private index = 0;

  // The current game.
  private lines: string[] = [];
  private startLine = 0;
  private hasGame = false;
  private hasMovetext = false;
  /** Whether the current game has had a movetext token other than a comment. */
  private hasTokens = false;
  private ended = false;
  private inBrace = false;
  private depth = 0;
  /** Blank, escape and comment lines after the current game's last content line. */
  private pending: string[] = [];
  private pendingStart = 0;
  /** Whether a blank line precedes the line being handled. */
  private afterBlank = false;

  private out: RawGame[] = [];

  push(chunk: string): RawGame[] {
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.startsWith(BOM)) chunk = chunk.slice(1);
    }
    let pos = 0;
    let nl = chunk.indexOf('\n');
    if (nl !== -1 && this.partial.length > 0) {
      this.handleLine(this.partial + chunk.slice(0, nl + 1));
      this.partial = '';
      pos = nl + 1;
      nl = chunk.indexOf('\n', pos);
    }
    while (nl !== -1) {
      this.handleLine(chunk.slice(pos, nl + 1));
      pos = nl + 1;
      nl = chunk.indexOf('\n', pos);
    }
    if (pos < chunk.length) this.partial += chunk.slice(pos);
    return this.take();
  }

  end(): RawGame[] {
    if (this.partial.length > 0) {
      this.handleLine(this.partial);
      this.partial = '';
    }
    this.finishGame();
    this.pending = [];
    return this.take();
  }

  private take(): RawGame[] {
    if (this.out.length === 0) return [];
    const out = this.out;
    this.out = [];
    return out;
  }

  /** `raw` is one line including its line ending, if any. */
  private handleLine(raw: string): void {
    this.lineNo++;
    // The line ending stays on: every test below reads "\r\n" as the blank space it is, and not cutting it
    // off saves a string per line.
    const line = raw;

    if (this.inBrace) {
      if (isBlank(line)) {
        this.addContent(raw);
        this.afterBlank = true;
        return;
      }
      if (this.afterBlank && TAG_LINE.test(line)) {
        // Runaway comment: a tag pair after a blank line starts the next game.
        this.inBrace = false;
        this.startGame(raw);
        this.scanTags(line);
      } else {
        this.addContent(raw);
        this.scanMovetext(line, 0);
      }
      this.afterBlank = false;
      return;
    }

    if (line.length > 0 && line.charCodeAt(0) === CH_PERCENT) {
      this.addPending(raw);
      return;
    }
    let i = 0;
    while (i < line.length && isSpace(line.charCodeAt(i))) i++;
    if (i === line.length) {
      this.addPending(raw);
      this.afterBlank = true;
      return;
    }
    const c = line.charCodeAt(i);
    if (c === CH_SEMI && (!this.hasGame || this.ended)) {
      this.addPending(raw);
      return;
    }

    if (c === CH_LBRACKET) {
      if (!this.hasGame || this.hasMovetext || (this.afterBlank && this.repeatsTag(line, i)))
        this.startGame(raw);
      else this.addContent(raw);
      this.scanTags(line);
    } else {
      if (
        !this.hasGame ||
        this.ended ||
        (this.afterBlank && this.hasTokens && this.depth === 0 && FIRST_MOVE_LINE.test(line))
      ) {
        this.startGame(raw);
      } else {
        this.addContent(raw);
      }
      if (!this.inBrace && !MOVETEXT_SPECIALS.test(line)) {
        // Most movetext lines hold only moves, numbers and maybe the result: two native scans instead of a
        // loop over every character (what scanMovetext concludes for such a line).
        this.hasMovetext = true;
        this.hasTokens = true;
        if (this.depth === 0 && TERMINATOR_TOKEN.test(line)) this.ended = true;
      } else {
        this.scanMovetext(line, i);
      }
    }
    this.afterBlank = false;
  }

  private addPending(raw: string): void {
    if (this.pending.length === 0) this.pendingStart = this.lineNo;
    this.pending.push(raw);
  }

  private addContent(raw: string): void {
    if (this.pending.length > 0) {
      for (const p of this.pending) this.lines.push(p);
      this.pending = [];
    }
    this.lines.push(raw);
  }

  private startGame(raw: string): void {
    this.finishGame();
    this.hasGame = true;
    this.hasMovetext = false;
    this.hasTokens = false;
    this.ended = false;
    this.inBrace = false;
    this.depth = 0;
    // Escape and comment lines just before the game belong to it; blank lines do not.
    let first = 0;
    while (first < this.pending.length && isBlank(this.pending[first] as string)) first++;
    if (first < this.pending.length) {
      this.startLine = this.pendingStart + first;
      for (let k = first; k < this.pending.length; k++) this.lines.push(this.pending[k] as string);
    } else {
      this.startLine = this.lineNo;
    }
    this.pending = [];
    this.lines.push(raw);
  }

  private finishGame(): void {
    if (!this.hasGame) return;
    this.index++;
    this.out.push({ text: this.lines.join(''), line: this.startLine, index: this.index });
    this.lines = [];
    this.hasGame = false;
  }

  /**
   * Whether the tag line starting at `i` names a tag the current game already has. Only
   * asked after a blank line in a tag section, so the current game's lines are re-read
   * rather than every tag name being recorded for every game.
   */
  private repeatsTag(line: string, i: number): boolean {
    const names = tagNamesOf(line, i);
    if (names.length === 0) return false;
    for (const previous of this.lines) {
      const start = previous.search(/\S/);
      if (start === -1 || previous.charCodeAt(start) !== CH_LBRACKET) continue;
      for (const name of tagNamesOf(previous, start)) if (names.includes(name)) return true;
    }
    return false;
  }

  /** Skips the tag pairs of a tag line; anything after them is movetext. */
  private scanTags(line: string): void {
    let i = 0;
    const n = line.length;
    for (;;) {
      while (i < n && isSpace(line.charCodeAt(i))) i++;
      if (i >= n || line.charCodeAt(i) !== CH_LBRACKET) break;
      i++;
      while (i < n && line.charCodeAt(i) !== CH_QUOTE && line.charCodeAt(i) !== CH_RBRACKET) i++;
      if (i < n && line.charCodeAt(i) === CH_QUOTE) {
        i++;
        while (i < n && line.charCodeAt(i) !== CH_QUOTE) i += line.charCodeAt(i) === CH_BACKSLASH ? 2 : 1;
        i++;
        while (i < n && line.charCodeAt(i) !== CH_RBRACKET) i++;
      }
      if (i >= n) return; // Malformed or unterminated tag: the rest of the line is its text.
      i++;
    }
    if (i < n) this.scanMovetext(line, i);
  }

  /** Tracks braces, parentheses and result terminators from `start` to the end of `line`. */
  private scanMovetext(line: string, start: number): void {
    const n = line.length;
    let i = start;
    if (this.inBrace) {
      const close = line.indexOf('}', i);
      if (close === -1) return;
      this.inBrace = false;
      i = close + 1;
    }
    while (i < n) {
      const c = line.charCodeAt(i);
      if (isSpace(c)) {
        i++;
        continue;
      }
      if (c === CH_SEMI) return;
      this.hasMovetext = true;
      if (c === CH_LBRACE) {
        const close = line.indexOf('}', i + 1);
        if (close === -1) {
          this.inBrace = true;
          return;
        }
        i = close + 1;
      } else if (c === CH_LPAREN) {
        this.hasTokens = true;
        this.depth++;
        i++;
      } else if (c === CH_RPAREN) {
        if (this.depth > 0) this.depth--;
        i++;
      } else {
        this.hasTokens = true;
        const tokenStart = i;
        while (i < n) {
          const d = line.charCodeAt(i);
          if (
            isSpace(d) ||
            d === CH_LBRACE ||
            d === CH_RBRACE ||
            d === CH_LPAREN ||
            d === CH_RPAREN ||
            d === CH_SEMI
          )
            break;
          i++;
        }
        if (this.depth === 0 && isTerminator(line, tokenStart, i)) this.ended = true;
        if (i < n && line.charCodeAt(i) === CH_RBRACE) i++;
      }
    }
  }
}

/** Names of the tag pairs on a tag line (best effort; malformed tags yield nothing). */
function tagNamesOf(line: string, i: number): string[] {
  const names: string[] = [];
  const re = /\[\s*([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"(?:[^"\\]|\\.)*"\s*\]/y;
  re.lastIndex = i;
  for (;;) {
    const m = re.exec(line);
    if (!m) break;
    names.push(m[1] as string);
    while (re.lastIndex < line.length && isSpace(line.charCodeAt(re.lastIndex))) re.lastIndex++;
  }
  return names;
}

/** Splits a whole decoded text at once (convenience for tests and small inputs). */
export function splitPgn(text: string): RawGame[] {
  const splitter = new PgnSplitter();
  return [...splitter.push(text), ...splitter.end()];
}
