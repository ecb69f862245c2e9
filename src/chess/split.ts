// Streaming splitter: cuts decoded PGN text into the original texts of single games.
//
// It only tracks what decides where a game ends (tag lines, brace comments, parenthesis
// depth, result terminators); parsing and checking moves is normalize.ts's job. Memory is
// bounded by the chunk being read plus the current game (a game's text is a view of its chunk,
// which stays in memory as long as any of its games does). With maxGameChars, a game that grows
// past it is no longer held: its text is handed out in pieces as it is read (RawGame.part), and
// the game ends as one marked `oversize`, for its reader to reject unread.
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
// - A tag line that ends between a tag pair's tokens ('[Result', '[Result "*"') leaves the pair open: the next
//   line that starts with its value or its ']' goes on with it, as the parser reads it, and is no movetext.
// - Inside a brace comment, lines starting with '[' (e.g. "[%clk 0:01:00]") are comment
//   text. Only a complete tag pair line after a blank line closes a runaway comment, so an
//   unbalanced '{' cannot swallow the rest of a file.
// - A line too long to read whole (LongLine) is read as its start alone, in a game too large to hold;
//   what the rest held is unknown, so unless the line is an escape or comment line, that game goes on as
//   after an unclosed '{': to the next complete tag pair line after a blank line.
// - With maxGameChars, more than that many characters of blank, escape or comment lines after a game's
//   last content line are never held: blank lines end the game, and escape and comment lines go on with a
//   game that has not ended, or start the next game (theirs anyway), which is then too large.
// - A line starting with CUT_NOTE belongs to the current game, and marks it as cut short (RawGame.cut).

import type { LongLine, RawGame } from './types.ts';

/**
 * The start of the line that ends a game which a rejects file keeps only the first part of
 * (src/import/rejects.ts); read again, the game is rejected unchecked (RawGame.cut).
 */
export const CUT_NOTE = '; chessport: cut here';

const BOM = '\uFEFF';
/**
 * The most tag names of a game that repeatsTag remembers: real games have a few dozen tags, and a game of
 * millions (too large to check anyway) would fill the memory with them.
 */
const MAX_TAG_NAMES = 10_000;

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

/**
 * The end of a line that leaves a tag pair open between its tokens: from its '[', its name and maybe its value,
 * then blanks; or, on a line that goes on with a tag pair, its value and blanks. (No blanks before the first
 * token: two runs of them in a row would make the expression try every way to share them out.)
 */
const OPEN_TAG_END = /^(?:\[\s*[A-Za-z0-9][A-Za-z0-9_+#=:-]*)?\s*(?:"(?:[^"\\]|\\.)*"\s*)?$/;
/** A complete tag pair on a line of its own; used to end a runaway brace comment. */
const TAG_LINE = /^\s*\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+"(?:[^"\\]|\\.)*"\]\s*$/;
/**
 * A movetext line that starts with White's first move ("1.", "1. e4", "1.e4"): after a blank line, the start
 * of a game without tags. Not "1..." or "1. ...": Black's first move continues a game (a headless game cannot
 * start with it, as it has no FEN), typically after a comment and a blank line.
 */
const FIRST_MOVE_LINE = /^\s*1\s*\.(?!\s*[.\u2026])/;
/** A result terminator as a token of its own (between the blanks of isSpace), where it starts. */
const TERMINATOR_AT = /(?<=^|[\t\n\v\f\r ])(?:1-0|0-1|1\/2-1\/2|\*)(?=[\t\n\v\f\r ]|$)/g;

function isSpace(c: number): boolean {
  return c === CH_SPACE || c === CH_TAB || c === CH_CR || c === 10 || c === 11 || c === 12;
}

/** Whether text[start, end) is a result terminator. */
function isTerminator(text: string, start: number, end: number): boolean {
  const len = end - start;
  if (len === 1) return text.charCodeAt(start) === 42; // '*'
  if (len === 3) {
    // "1-0" or "0-1", by character: a token of three is most often a move ("Nf3"), not worth a string.
    const a = text.charCodeAt(start);
    const b = text.charCodeAt(start + 2);
    return text.charCodeAt(start + 1) === 45 && ((a === 49 && b === 48) || (a === 48 && b === 49));
  }
  return len === 7 && text.startsWith('1/2-1/2', start);
}

/**
 * Where a pattern next occurs in a text, remembered: asked with rising positions, the text is searched once
 * from end to end, not once per line (a line without a match would otherwise have the search run on through
 * the lines after it). `find` gives the first occurrence at or after `from`, or -1.
 */
class NextMatch {
  /** The last search: from where, and where it matched (the text's length for no match). */
  private searched = -1;
  private at = -1;

  private readonly find: (text: string, from: number) => number;

  constructor(find: (text: string, from: number) => number) {
    this.find = find;
  }

  /** Forgets the last search: a new text is being read. */
  reset(): void {
    this.searched = -1;
    this.at = -1;
  }

  /** Where the first match at or after `from` starts, or text.length when there is none. */
  from(text: string, from: number): number {
    if (this.searched !== -1 && this.searched <= from && from <= this.at) return this.at;
    const at = this.find(text, from);
    this.searched = from;
    this.at = at === -1 ? text.length : at;
    return this.at;
  }
}

/**
 * Cuts text into the original texts of single games, chunk by chunk.
 *
 * A game's text is a range of the input: from its first line (an escape or comment line before its tags
 * belongs to it) to the end of its last line of content. So each chunk is read in place, line by line as
 * positions, and a game's text is one slice of it (V8 makes that a view of the chunk, not a copy); only the
 * part of a game read in earlier chunks is kept as a string (carry). Slicing every line and joining them per
 * game would make most of the splitter's work and garbage (docs/performance.md).
 */
export interface SplitterOptions {
  /**
   * The longest game held whole, in characters: a longer one is handed out in pieces (RawGame.part and
   * `oversize`). Default: no limit.
   */
  maxGameChars?: number;
}

export class PgnSplitter {
  private readonly maxGameChars: number;
  /**
   * For a game longer than maxGameChars: where the text not yet handed out starts (a position in the whole
   * input), else -1.
   */
  private spilledTo = -1;
  /**
   * Of the current game's lines too long to read whole (LongLine): the first one's number and length in
   * bytes, and the bytes never read of them all.
   */
  private longLine: { line: number; bytes: number } | undefined;
  private dropped = 0;
  /**
   * Whether the current game has a line too long to read whole whose rest may have changed what follows
   * (opened or closed a comment or variation): the game then goes on to the next complete tag pair line
   * after a blank line, as after an unclosed '{' (inBrace is set with it).
   */
  private lost = false;
  /** The line of a CUT_NOTE in the current game, or 0. */
  private cutNote = 0;

  constructor(options: SplitterOptions = {}) {
    this.maxGameChars = options.maxGameChars ?? Number.POSITIVE_INFINITY;
  }

  /** Incomplete last line of the input so far. */
  private partial = '';
  /** Number of complete lines consumed. */
  private lineNo = 0;
  private started = false;
  private index = 0;

  /** The text being read, and the position in the whole input of its first character. */
  private buf = '';
  private bufAt = 0;
  /** Input read before buf that is still needed (the current game's start onwards), from position carryAt. */
  private carry = '';
  private carryAt = 0;

  // The current game: its text runs from gameAt to contentEnd (positions in the whole input).
  private gameAt = 0;
  private contentEnd = 0;
  private startLine = 0;
  private hasGame = false;
  private hasMovetext = false;
  /** Whether the current game has had a movetext token other than a comment. */
  private hasTokens = false;
  private ended = false;
  private inBrace = false;
  /**
   * Whether a tag line ended inside a tag pair, between its tokens ('[Result', '[Result "*"'): the next line
   * that would be movetext goes on with it if it starts with the pair's value or its ']'.
   */
  private openTag = false;
  private depth = 0;
  /**
   * Of the blank, escape and comment lines after the current game's last content line, the first that is
   * not blank (escape or comment line): its position and line number, or -1.
   */
  private keptAt = -1;
  private keptLine = 0;
  /** Whether a blank line precedes the line being handled. */
  private afterBlank = false;

  private readonly specials = /[^{}();\n]*/y;
  private readonly terminators = new NextMatch((text, from) => {
    TERMINATOR_AT.lastIndex = from;
    return TERMINATOR_AT.exec(text)?.index ?? -1;
  });
  // indexOf, not a regular expression: exec makes a match array per comment, and engine games have one per
  // move (docs/performance.md).
  private readonly closes = new NextMatch((text, from) => text.indexOf('}', from));

  private out: RawGame[] = [];

  /** For repeatsTag: the tag names of the game starting at namesGameAt, read from its lines up to namesAt. */
  private readonly names = new Set<string>();
  /** The blanks at the start of a line (its line end not among them), for readNames. */
  private readonly lineBlanks = /[^\S\n]*/y;
  private namesGameAt = -1;
  private namesAt = 0;

  push(chunk: string | LongLine): RawGame[] {
    if (typeof chunk !== 'string') return this.pushLongLine(chunk);
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.startsWith(BOM)) chunk = chunk.slice(1);
    }
    // An incomplete line from the last chunk is read with the rest of it (decodePgnStream's chunks end at
    // line ends, so only other callers pay for this copy).
    this.setBuf(this.partial.length > 0 ? this.partial + chunk : chunk, this.bufAt);
    const buf = this.buf;
    const pos = this.handleLines(buf);
    this.partial = buf.slice(pos);
    // What is still needed of buf becomes carry; the next buf starts with the incomplete line.
    this.keep(this.bufAt + pos);
    this.setBuf('', this.bufAt + pos);
    return this.take();
  }

  /** A line too long to read whole: read as its head alone, as a whole line. */
  private pushLongLine(line: LongLine): RawGame[] {
    let head = line.head;
    if (!this.started) {
      this.started = true;
      if (head.startsWith(BOM)) head = head.slice(1);
    }
    this.setBuf(`${this.partial}${head}\n`, this.bufAt);
    this.partial = '';
    const end = this.buf.length;
    this.handleLongLine(end, line);
    this.keep(this.bufAt + end);
    this.setBuf('', this.bufAt + end);
    return this.take();
  }

  /**
   * The long line buf[0, end): read as a line; it is always a line of a game (not one of the blank, escape
   * or comment lines between games), which it makes too large to hold.
   */
  private handleLongLine(end: number, line: LongLine): void {
    const buf = this.buf;
    const inBrace = this.inBrace;
    let i = 0;
    while (i < end && isSpace(buf.charCodeAt(i))) i++;
    // An escape or comment line holds nothing that changes what follows, however long it is.
    const inert = !inBrace && (buf.charCodeAt(0) === CH_PERCENT || buf.charCodeAt(i) === CH_SEMI);
    // Blanks as far as it was read are no blank line: the rest is unknown.
    if (i === end && !inBrace) this.lineNo++;
    else this.handleLine(0, end);
    if (!this.hasGame || this.contentEnd !== this.bufAt + end) {
      // Not (yet) a line of a game: one of the lines between games, which belong to the next game, or, in a
      // game that has not ended, to it if it goes on.
      if (this.hasGame && !this.ended) this.addContent(end);
      else this.startGame(0, end);
    }
    this.longLine ??= { line: this.lineNo, bytes: line.bytes };
    this.dropped += line.dropped;
    if (!inert) {
      this.inBrace = true;
      this.lost = true;
    }
    this.afterBlank = false;
  }

  /**
   * Handles the complete lines of buf; returns where the incomplete last line starts. The loop is a function
   * of its own: inside push, V8 compiles it on its own (on-stack replacement) before push has ever got past
   * it, and leaves that code at the loop's end, once per chunk (docs/performance.md).
   */
  private handleLines(buf: string): number {
    let pos = 0;
    let nl = buf.indexOf('\n');
    while (nl !== -1) {
      this.handleLine(pos, nl + 1);
      pos = nl + 1;
      nl = buf.indexOf('\n', pos);
    }
    return pos;
  }

  end(): RawGame[] {
    if (this.partial.length > 0) {
      this.setBuf(this.partial, this.bufAt);
      this.partial = '';
      this.handleLine(0, this.buf.length);
    }
    this.finishGame();
    this.keptAt = -1;
    return this.take();
  }

  private setBuf(text: string, at: number): void {
    this.buf = text;
    this.bufAt = at;
    this.terminators.reset();
    this.closes.reset();
  }

  /** Keeps, as carry, the input still needed once buf is gone: from the current game's start to `upTo`. */
  private keep(upTo: number): void {
    const max = this.maxGameChars;
    if (this.keptAt !== -1 && upTo - this.keptAt > max) {
      // Escape and comment lines too long together to hold: whatever game they belong to is too large. A game
      // that has not ended takes them; else they start the next game, as they would once it began.
      if (this.hasGame && !this.ended) this.addContent(upTo - this.bufAt);
      else this.startGame(upTo - this.bufAt, upTo - this.bufAt); // from keptAt
    } else if (this.hasGame && upTo - this.contentEnd > max) {
      // Blank lines after a game too long to hold: they end it (a line going on with it would make it
      // larger than the largest game).
      this.finishGame();
    }
    if (this.hasGame && (this.spilledTo !== -1 || this.dropped > 0 || this.contentEnd - this.gameAt > max))
      this.spill();
    const from = this.hasGame
      ? this.spilledTo !== -1
        ? this.spilledTo
        : this.gameAt
      : this.keptAt !== -1
        ? this.keptAt
        : upTo;
    this.carry = this.text(from, upTo);
    this.carryAt = from;
  }

  /** The input from `from` to `to` (positions in the whole input, from carryAt on). */
  private text(from: number, to: number): string {
    const { buf, bufAt, carry, carryAt } = this;
    if (from >= bufAt) return buf.slice(from - bufAt, to - bufAt);
    if (to <= bufAt) return carry.slice(from - carryAt, to - carryAt);
    return carry.slice(from - carryAt) + buf.slice(0, to - bufAt);
  }

  private take(): RawGame[] {
    if (this.out.length === 0) return [];
    const out = this.out;
    this.out = [];
    return out;
  }

  private isBlank(start: number, end: number): boolean {
    const buf = this.buf;
    for (let i = start; i < end; i++) {
      if (!isSpace(buf.charCodeAt(i))) return false;
    }
    return true;
  }

  /** The line buf[start, end), with its line ending if any. */
  private handleLine(start: number, end: number): void {
    this.lineNo++;
    // The line ending stays on: every test below reads "\r\n" as the blank space it is.
    const buf = this.buf;
    const first = buf.charCodeAt(start);

    if (first === CH_SEMI && this.hasGame && buf.startsWith(CUT_NOTE, start)) {
      // A rejects file kept only the first part of the game: the note belongs to it, whatever came before.
      this.cutNote ||= this.lineNo;
      this.addContent(end);
      this.afterBlank = false;
      return;
    }

    if (this.inBrace) {
      if (this.isBlank(start, end)) {
        this.addContent(end);
        this.afterBlank = true;
        return;
      }
      if (this.afterBlank && TAG_LINE.test(buf.slice(start, end))) {
        // Runaway comment: a tag pair after a blank line starts the next game.
        this.inBrace = false;
        this.startGame(start, end);
        this.scanTags(start, end);
      } else {
        this.addContent(end);
        if (!this.lost) this.scanMovetext(start, end);
      }
      this.afterBlank = false;
      return;
    }

    if (end > start && first === CH_PERCENT) {
      this.addPending(start, false);
      return;
    }
    let i = start;
    while (i < end && isSpace(buf.charCodeAt(i))) i++;
    if (i === end) {
      this.addPending(start, true);
      this.afterBlank = true;
      return;
    }
    const c = buf.charCodeAt(i);
    if (c === CH_SEMI && (!this.hasGame || this.ended)) {
      this.addPending(start, false);
      return;
    }

    if (c === CH_LBRACKET) {
      if (
        !this.hasGame ||
        this.hasMovetext ||
        (this.afterBlank && this.repeatsTag(buf.slice(start, end), i - start))
      )
        this.startGame(start, end);
      else this.addContent(end);
      this.scanTags(start, end);
    } else {
      if (this.openTag) {
        this.openTag = false;
        // A tag pair broken at its blanks ('[Result\n  "*"]'), which the parser reads as one: the line that goes
        // on with it (its value or its ']') is the tag section's, not movetext.
        if (c === CH_QUOTE || c === CH_RBRACKET) {
          this.addContent(end);
          this.scanTags(i, end, true);
          this.afterBlank = false;
          return;
        }
      }
      if (
        !this.hasGame ||
        this.ended ||
        (this.afterBlank && this.hasTokens && this.depth === 0 && FIRST_MOVE_LINE.test(buf.slice(start, end)))
      ) {
        this.startGame(start, end);
      } else {
        this.addContent(end);
      }
      if (!this.inBrace && !this.hasSpecials(i, end)) {
        // Most movetext lines hold only moves, numbers and maybe the result: two native scans instead of a
        // loop over every character (what scanMovetext concludes for such a line).
        this.hasMovetext = true;
        this.hasTokens = true;
        if (this.depth === 0 && this.terminators.from(buf, start) < end) this.ended = true;
      } else {
        this.scanMovetext(i, end);
      }
    }
    this.afterBlank = false;
  }

  /** Whether buf[start, end) holds a character scanMovetext must see: a brace, a parenthesis or ';'. */
  private hasSpecials(start: number, end: number): boolean {
    this.specials.lastIndex = start;
    this.specials.test(this.buf);
    const stop = this.specials.lastIndex; // the first special or line feed, or the end of buf
    return stop < end && this.buf.charCodeAt(stop) !== 10;
  }

  private addPending(start: number, blank: boolean): void {
    if (!blank && this.keptAt === -1) {
      this.keptAt = this.bufAt + start;
      this.keptLine = this.lineNo;
    }
  }

  /** A line of the current game ending at buf[end]: the lines pending before it are the game's too. */
  private addContent(end: number): void {
    this.keptAt = -1;
    this.contentEnd = this.bufAt + end;
  }

  private startGame(start: number, end: number): void {
    this.finishGame();
    this.hasGame = true;
    this.hasMovetext = false;
    this.hasTokens = false;
    this.ended = false;
    this.inBrace = false;
    this.lost = false;
    this.openTag = false;
    this.depth = 0;
    this.longLine = undefined;
    this.dropped = 0;
    this.cutNote = 0;
    // Escape and comment lines just before the game belong to it; blank lines before them do not.
    if (this.keptAt !== -1) {
      this.gameAt = this.keptAt;
      this.startLine = this.keptLine;
    } else {
      this.gameAt = this.bufAt + start;
      this.startLine = this.lineNo;
    }
    this.keptAt = -1;
    this.contentEnd = this.bufAt + end;
  }

  private finishGame(): void {
    if (!this.hasGame) return;
    this.index++;
    const game: RawGame = { text: '', line: this.startLine, index: this.index };
    const chars = this.contentEnd - this.gameAt;
    if (this.spilledTo !== -1 || this.dropped > 0 || chars > this.maxGameChars) {
      game.oversize = chars;
      game.text = this.text(this.spilledTo !== -1 ? this.spilledTo : this.gameAt, this.contentEnd);
      this.spilledTo = -1;
      if (this.longLine) {
        game.longLine = this.longLine;
        game.dropped = this.dropped;
      }
    } else {
      game.text = this.text(this.gameAt, this.contentEnd);
      if (this.cutNote) game.cut = this.cutNote;
    }
    this.out.push(game);
    this.hasGame = false;
  }

  /**
   * Hands out the current game's text read so far, which is longer than maxGameChars, as a piece, and
   * holds no more of it. The tag names a blank line in its tag section compares with (repeatsTag) are
   * read from it first.
   */
  private spill(): void {
    const from = this.spilledTo !== -1 ? this.spilledTo : this.gameAt;
    if (!this.hasMovetext) this.readNames();
    if (this.contentEnd > from)
      this.out.push({
        text: this.text(from, this.contentEnd),
        line: this.startLine,
        index: this.index + 1,
        part: true,
      });
    this.spilledTo = this.contentEnd;
  }

  /**
   * Whether the tag line (tags from `i`) names a tag the current game already has. Only asked after a
   * blank line in a tag section, so the tag names are not recorded for every game: the game's lines are
   * read here, each once (reading them all again for each such line would take quadratic time on a game of
   * tag lines with blank lines between them: docs/performance.md).
   */
  private repeatsTag(line: string, i: number): boolean {
    const names = tagNamesOf(line, i);
    if (names.length === 0) return false;
    this.readNames();
    return names.some((name) => this.names.has(name));
  }

  /** Reads the tag names of the current game's lines not read yet into `names`. */
  private readNames(): void {
    if (this.namesGameAt !== this.gameAt) {
      this.namesGameAt = this.gameAt;
      this.namesAt = this.spilledTo !== -1 ? this.spilledTo : this.gameAt;
      this.names.clear();
    }
    if (this.namesAt < this.contentEnd && this.names.size < MAX_TAG_NAMES) {
      // Line by line in place: a game too large to hold has its text read here as it goes, and a string per
      // line would be most of the work and garbage.
      const text = this.text(this.namesAt, this.contentEnd);
      const blanks = this.lineBlanks;
      for (let at = 0; at < text.length && this.names.size < MAX_TAG_NAMES; ) {
        const nl = text.indexOf('\n', at);
        const end = nl === -1 ? text.length : nl + 1;
        blanks.lastIndex = at;
        blanks.test(text);
        const start = blanks.lastIndex;
        if (start < end && text.charCodeAt(start) === CH_LBRACKET)
          for (const name of tagNamesOf(text.slice(at, end), start - at)) this.names.add(name);
        at = end;
      }
    }
    this.namesAt = this.contentEnd;
  }

  /**
   * Skips the tag pairs of the tag line buf[start, n); anything after them is movetext. `resume`: the line goes
   * on with a tag pair that the line before left open (openTag).
   */
  private scanTags(start: number, n: number, resume = false): void {
    const line = this.buf;
    let i = start;
    for (;;) {
      if (!resume) {
        while (i < n && isSpace(line.charCodeAt(i))) i++;
        if (i >= n || line.charCodeAt(i) !== CH_LBRACKET) break;
      }
      const tagAt = i; // its '[', or where the line goes on with one (a quote)
      if (!resume) i++;
      resume = false;
      while (i < n && line.charCodeAt(i) !== CH_QUOTE && line.charCodeAt(i) !== CH_RBRACKET) i++;
      if (i < n && line.charCodeAt(i) === CH_QUOTE) {
        i++;
        while (i < n && line.charCodeAt(i) !== CH_QUOTE) i += line.charCodeAt(i) === CH_BACKSLASH ? 2 : 1;
        i++;
        while (i < n && line.charCodeAt(i) !== CH_RBRACKET) i++;
      }
      if (i >= n) {
        // Malformed or unterminated tag: the rest of the line is its text. Unless the line ends between the
        // tokens of a tag pair: then the next line may go on with it.
        this.openTag = OPEN_TAG_END.test(line.slice(tagAt, n));
        return;
      }
      i++;
    }
    if (i < n) this.scanMovetext(i, n);
  }

  /** Tracks braces, parentheses and result terminators in buf[start, n). */
  private scanMovetext(start: number, n: number): void {
    const line = this.buf;
    let i = start;
    if (this.inBrace) {
      const close = this.closes.from(line, i);
      if (close >= n) return;
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
        const close = this.closes.from(line, i + 1);
        if (close >= n) {
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
