// Syntax of one game: tag pairs and a movetext tree (moves, comments, NAGs, variations).
// Moves are classified here but not checked against a position; that is play.ts's job.
//
// Stricter than chessops' parser on purpose: an unknown token ("Sf3", "<br", "3/2") makes
// the game a reject with a reason instead of being skipped, so nothing is silently lost.

import type { Role } from 'chessops/types';
import { COMMENT_END, cleanComment } from './comments.ts';
import { type MoveKind, type MoveNode, newNode } from './tree.ts';

export interface ParsedGame {
  /** Tag pairs in source order; for a repeated name the last value wins (first position kept). */
  tags: Map<string, string>;
  /** Comments before the first move. */
  comments: string[];
  moves: MoveNode[];
  /** Result terminator of the main line, if any. */
  terminator: string | undefined;
  /** What was read but could not be kept as written (a repeated tag's earlier value). */
  warnings: string[];
}

export type ParseResult = { ok: true; game: ParsedGame } | { ok: false; reason: string };

/** Suffix annotations and traditional evaluation symbols, as NAG numbers. */
const SYMBOL_NAGS = new Map<string, number>([
  ['!', 1],
  ['?', 2],
  ['!!', 3],
  ['??', 4],
  ['!?', 5],
  ['?!', 6],
  ['\u25a1', 7], // white square: only move
  ['=', 10],
  ['\u221e', 13], // infinity: unclear
  ['+=', 14],
  ['+/=', 14],
  ['\u2a72', 14],
  ['=+', 15],
  ['=/+', 15],
  ['\u2a71', 15],
  ['+/-', 16],
  ['\u00b1', 16],
  ['-/+', 17],
  ['\u2213', 17],
  ['+-', 18],
  ['-+', 19],
  ['=/\u221e', 44],
  ['N', 146],
]);

const MAX_DEPTH = 100;
const NULL_MOVES = new Set(['--', 'Z0', '0000', '@@@@']);

const COORD_RE = /^([a-h])([1-8])[-x]?([a-h])([1-8])=?([nbrqNBRQ])?$/;
const CASTLE_RE = /^([O0o])-\1(-\1)?$/;
const DROP_RE = /^[PNBRQK]?@[a-h][1-8]$/;

/**
 * The role of each piece letter, either case, by character code: an element load. An object keyed by the
 * letters would make a keyed load with changing keys, which V8 serves slowly (megamorphic), once or twice a
 * move.
 */
const ROLES: (Role | undefined)[] = Array.from({ length: 128 }, () => undefined);
for (const [letter, role] of [
  ['P', 'pawn'],
  ['N', 'knight'],
  ['B', 'bishop'],
  ['R', 'rook'],
  ['Q', 'queen'],
  ['K', 'king'],
] as const) {
  ROLES[letter.charCodeAt(0)] = role;
  ROLES[letter.toLowerCase().charCodeAt(0)] = role;
}

const TAG_RE = /\[\s*([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s*"((?:[^"\\]|\\.)*)"\s*\]/y;

interface Frame {
  moves: MoveNode[];
  /** Comments and NAGs seen before this line's next move (variation start). */
  pendingComments?: string[];
  pendingNags?: number[];
}

class ParseError extends Error {}

/** Parses one game's text; `firstLine` is the number of its first line, for the line numbers in reasons. */
export function parseGame(text: string, firstLine = 1): ParseResult {
  try {
    return { ok: true, game: new Parser(text, firstLine).parse() };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, reason: err.message };
    throw err;
  }
}

class Parser {
  private readonly text: string;
  private pos = 0;
  private line: number;
  private readonly tags = new Map<string, string>();
  private readonly warnings: string[] = [];
  private readonly comments: string[] = [];
  private readonly stack: Frame[] = [{ moves: [] }];
  private terminator: string | undefined;

  constructor(text: string, firstLine: number) {
    this.text = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    this.line = firstLine;
  }

  parse(): ParsedGame {
    this.parseTags();
    this.parseMovetext();
    const root = this.stack[0] as Frame;
    return {
      tags: this.tags,
      comments: this.comments,
      moves: root.moves,
      terminator: this.terminator,
      warnings: this.warnings,
    };
  }

  private fail(message: string): never {
    throw new ParseError(message);
  }

  /** Skips whitespace, escape lines and ';' comments (collected when `keep`). */
  private skipSpace(keep: boolean): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 10) {
        this.line++;
        this.pos++;
        if (t.charCodeAt(this.pos) === 37) this.skipToEol(); // '%' escape line
      } else if (c === 32 || c === 9 || c === 13 || c === 11 || c === 12 || c === 0xa0) {
        this.pos++;
      } else if (c === 37 && this.pos === 0) {
        this.skipToEol();
      } else if (c === 59) {
        const start = this.pos + 1;
        this.skipToEol();
        if (keep) this.addComment(t.slice(start, this.pos));
      } else {
        return;
      }
    }
  }

  private skipToEol(): void {
    const nl = this.text.indexOf('\n', this.pos);
    this.pos = nl === -1 ? this.text.length : nl;
  }

  private parseTags(): void {
    const t = this.text;
    for (;;) {
      this.skipSpace(true);
      if (this.pos >= t.length || t.charCodeAt(this.pos) !== 91) return;
      TAG_RE.lastIndex = this.pos;
      const m = TAG_RE.exec(t);
      if (!m) {
        const eol = t.indexOf('\n', this.pos);
        const shown = t.slice(this.pos, eol === -1 ? undefined : eol).trim();
        this.fail(`malformed tag pair at line ${this.line}: ${clip(shown)}`);
      }
      const raw = m[2] as string;
      const value = raw.indexOf('\\') === -1 ? raw : raw.replace(/\\(["\\])/g, '$1');
      if (/[\r\n]/.test(value)) this.fail(`unterminated tag value at line ${this.line}`);
      const name = m[1] as string;
      const earlier = this.tags.get(name);
      if (earlier !== undefined && earlier !== value)
        this.warnings.push(
          `tag ${name} repeated at line ${this.line}: "${clip(earlier)}" replaced by "${clip(value)}"`,
        );
      this.tags.set(name, value);
      this.pos = TAG_RE.lastIndex;
      // A tag pair may be broken over lines at its blanks ('[Event\n"x"]'): the lines after it are counted on.
      this.countLines(m[0]);
    }
  }

  private parseMovetext(): void {
    const t = this.text;
    for (;;) {
      this.skipSpace(true);
      if (this.pos >= t.length) break;
      const c = t.charCodeAt(this.pos);
      if (c === 123) {
        // '{'
        this.braceComment();
      } else if (c === 40) {
        // '('
        const frame = this.top();
        const last = frame.moves[frame.moves.length - 1];
        if (!last) this.fail(`variation before any move at line ${this.line}`);
        const variation: MoveNode[] = [];
        if (last.variations) last.variations.push(variation);
        else last.variations = [variation];
        // Playing and writing variations recurses; real games nest a handful of levels.
        if (this.stack.length > MAX_DEPTH)
          this.fail(`variations nested deeper than ${MAX_DEPTH} at line ${this.line}`);
        this.stack.push({ moves: variation });
        this.pos++;
      } else if (c === 41) {
        // ')'
        if (this.stack.length === 1) this.fail(`unmatched ')' at line ${this.line}`);
        this.closeVariation();
        this.pos++;
      } else if (c === 36) {
        // '$'
        let end = this.pos + 1;
        while (end < t.length && t.charCodeAt(end) >= 48 && t.charCodeAt(end) <= 57) end++;
        if (end === this.pos + 1) this.fail(`'$' without a number at line ${this.line}`);
        this.addNag(Number(t.slice(this.pos + 1, end)));
        this.pos = end;
      } else if (c === 92 && t.charCodeAt(this.pos + 1) === 36) {
        // "\$15": a NAG escaped by a JSON-ish exporter (lichess studies); the backslash is noise.
        this.pos++;
      } else if (c === 125) {
        this.fail(`unmatched '}' at line ${this.line}`);
      } else if (c === 91) {
        this.fail(`tag pair after the movetext at line ${this.line} (two games in one text?)`);
      } else {
        let end = this.pos + 1;
        while (end < t.length && !endsWord(t.charCodeAt(end))) end++;
        if (c >= 48 && c <= 57 && moveNumberEnd(t, this.pos, end) === end) {
          // A move number alone ("12", "12.", "12..."): a third of the words, skipped without a string.
          if (this.terminator !== undefined && this.stack.length === 1)
            this.checkNotAfterResult(t.slice(this.pos, end));
          this.pos = end;
          continue;
        }
        const word = t.slice(this.pos, end);
        this.pos = end;
        this.handleWord(word);
      }
    }
    if (this.stack.length > 1) this.fail(`unterminated variation (missing ')')`);
  }

  private countLines(s: string): void {
    let i = s.indexOf('\n');
    while (i !== -1) {
      this.line++;
      i = s.indexOf('\n', i + 1);
    }
  }

  private top(): Frame {
    return this.stack[this.stack.length - 1] as Frame;
  }

  private closeVariation(): void {
    const frame = this.stack.pop() as Frame;
    const parent = this.top();
    const owner = parent.moves[parent.moves.length - 1] as MoveNode;
    const variations = owner.variations as MoveNode[][];
    // An empty variation goes. Its comments ("( {Also good is d4} )") stay, on the move it hangs on; its NAGs,
    // which would change that move's evaluation, go with it.
    if (frame.moves.length === 0) {
      variations.pop();
      for (const comment of frame.pendingComments ?? []) owner.comments = append(owner.comments, comment);
    }
    if (variations.length === 0) owner.variations = undefined;
  }

  private handleWord(word: string): void {
    const c = word.charCodeAt(0);
    if (c <= 57 /* '9' */) {
      if (isTerminator(word)) {
        // Inside a variation a terminator means nothing (some annotators end lines with one).
        if (this.stack.length === 1) {
          if (this.terminator !== undefined)
            this.fail(`second result terminator '${word}' at line ${this.line}`);
          this.terminator = word;
        }
        return;
      }
      if (c >= 48 /* '0' */) {
        // A move number glued to the move: "12.e4", "12...e5" (one alone never gets here: parseMovetext
        // skips it).
        const j = moveNumberEnd(word, 0, word.length);
        const last = word.charCodeAt(j - 1);
        if (last === 46 || last === 0x2026) word = word.slice(j);
      } else if (c === 46 && /^[.\u2026]+$/.test(word)) {
        return; // "..." of "1. ... e5"
      }
    }
    this.checkNotAfterResult(word);
    // Symbols: punctuation, non-ASCII, or the single letter 'N' (novelty); moves start with a letter.
    const first = word.charCodeAt(0);
    if (first < 65 || first > 122 || word.length === 1) {
      const symbol = SYMBOL_NAGS.get(word);
      if (symbol !== undefined) {
        this.addNag(symbol);
        return;
      }
    }
    // Check marks and suffix annotations, in either order ("Qh4+!", "Qh4!+").
    let end = word.length;
    let suffixStart = -1;
    for (;;) {
      const d = word.charCodeAt(end - 1);
      if (d === 43 || d === 35)
        end--; // '+', '#'
      else if (d === 33 || d === 63) {
        end--; // '!', '?'
        suffixStart = end;
      } else break;
    }
    let suffixNag: number | undefined;
    if (suffixStart !== -1) {
      const suffix = word.slice(suffixStart).replace(/[+#]/g, '');
      suffixNag = SYMBOL_NAGS.get(suffix);
      if (suffixNag === undefined) this.fail(`unexpected annotation '${clip(word)}' at line ${this.line}`);
    }
    let core = end === word.length ? word : word.slice(0, end);
    if (core.endsWith('e.p.')) core = core.slice(0, -4);
    const node = classify(core, this.line);
    if (!node) this.fail(`unexpected token '${clip(word)}' at line ${this.line}`);
    this.addMove(node);
    if (suffixNag !== undefined) this.addNag(suffixNag);
  }

  private checkNotAfterResult(word: string): void {
    if (this.terminator !== undefined && this.stack.length === 1) {
      this.fail(`text after the result terminator at line ${this.line}: ${clip(word)}`);
    }
  }

  private addMove(node: MoveNode): void {
    const frame = this.top();
    if (frame.pendingComments) {
      node.startComments = frame.pendingComments;
      frame.pendingComments = undefined;
    }
    if (frame.pendingNags) {
      node.nags = frame.pendingNags;
      frame.pendingNags = undefined;
    }
    frame.moves.push(node);
  }

  private addNag(nag: number): void {
    if (!Number.isSafeInteger(nag) || nag > 255) this.fail(`invalid NAG $${nag} at line ${this.line}`);
    const frame = this.top();
    const last = frame.moves[frame.moves.length - 1];
    // A NAG before the first move of a line (Informant style "($140 Qb5") annotates that move.
    if (!last) frame.pendingNags = append(frame.pendingNags, nag);
    else last.nags = append(last.nags, nag);
  }

  /**
   * The brace comment at `pos`. Most (engine output, clock commands) are one line of clean text but for a space
   * at either end, and one scan (COMMENT_END) finds their end and tells so, rather than three (finding the
   * '}', counting line breaks, checking the whitespace) and a second string for the trimmed text
   * (docs/performance.md).
   */
  private braceComment(): void {
    const t = this.text;
    const start = this.pos + 1;
    COMMENT_END.lastIndex = start;
    if (COMMENT_END.test(t) && t.charCodeAt(COMMENT_END.lastIndex - 1) === 125) {
      const close = COMMENT_END.lastIndex - 1;
      // Single spaces between other characters, and no '}': cleaning trims a space at either end (lichess
      // writes "{ [%clk 0:03:00] }"), nothing else.
      const from = t.charCodeAt(start) === 32 ? start + 1 : start;
      const to = close > from && t.charCodeAt(close - 1) === 32 ? close - 1 : close;
      this.pos = close + 1;
      if (to > from) this.keepComment(t.slice(from, to));
      return;
    }
    const close = t.indexOf('}', start);
    if (close === -1) this.fail(`unterminated comment starting at line ${this.line}`);
    const body = t.slice(start, close);
    this.countLines(body);
    this.addComment(body);
    this.pos = close + 1;
  }

  private addComment(raw: string): void {
    const text = cleanComment(raw);
    if (text === '') return;
    this.keepComment(text);
  }

  /** Adds a comment, as cleaned, to the move before it, the game, or the next move of a variation. */
  private keepComment(text: string): void {
    const frame = this.top();
    const last = frame.moves[frame.moves.length - 1];
    if (last) last.comments = append(last.comments, text);
    else if (this.stack.length === 1) this.comments.push(text);
    else frame.pendingComments = append(frame.pendingComments, text);
  }
}

/**
 * Whether a word is a result terminator ("1-0", "0-1", "1/2-1/2", "*"), by length first: a Set lookup
 * hashes the word, and every move number comes here.
 */
function isTerminator(word: string): boolean {
  switch (word.length) {
    case 1:
      return word === '*';
    case 3:
      return word === '1-0' || word === '0-1';
    case 7:
      return word === '1/2-1/2';
    default:
      return false;
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Whether the character ends a movetext word: blanks, braces, parentheses, ';' and '$'. */
function endsWord(d: number): boolean {
  return (
    d === 32 ||
    d === 10 ||
    d === 13 ||
    d === 9 ||
    d === 123 ||
    d === 125 ||
    d === 40 ||
    d === 41 ||
    d === 59 ||
    d === 36
  );
}

/** Where the move number at text[start] ends, before `end`: after its digits and any dots ("12.", "12..."). */
function moveNumberEnd(text: string, start: number, end: number): number {
  let i = start;
  while (i < end && isDigit(text.charCodeAt(i))) i++;
  while (i < end && (text.charCodeAt(i) === 46 || text.charCodeAt(i) === 0x2026)) i++;
  return i;
}

/** Appends to an optional list, creating it on first use. */
function append<V>(list: V[] | undefined, value: V): V[] {
  if (!list) return [value];
  list.push(value);
  return list;
}

/** A move token (without check marks and annotations) as a tree node, or undefined. */
function classify(core: string, line: number): MoveNode | undefined {
  // Coordinates first: "g1f3" also matches the SAN pattern (as a pawn on g1).
  const c1 = core.charCodeAt(1);
  const coord = core.length >= 4 && c1 >= 49 && c1 <= 56 ? COORD_RE.exec(core) : null;
  if (coord) {
    const node = newNode(core, 'coord', line);
    node.file = (coord[1] as string).charCodeAt(0) - 97;
    node.rank = (coord[2] as string).charCodeAt(0) - 49;
    node.to = (coord[3] as string).charCodeAt(0) - 97 + 8 * ((coord[4] as string).charCodeAt(0) - 49);
    if (coord[5]) node.promotion = ROLES[coord[5].charCodeAt(0)];
    return node;
  }
  const san = parseSan(core, line);
  if (san) return san;
  const castle = CASTLE_RE.exec(core);
  if (castle) {
    const node = newNode(core, 'castle', line);
    node.role = 'king';
    node.to = castle[2] ? 2 : 6;
    return node;
  }
  let kind: MoveKind | undefined;
  if (NULL_MOVES.has(core)) kind = 'null';
  else if (DROP_RE.test(core)) kind = 'drop';
  return kind ? newNode(core, kind, line) : undefined;
}

function isFile(c: number): boolean {
  return c >= 97 && c <= 104;
}

function isRank(c: number): boolean {
  return c >= 49 && c <= 56;
}

/**
 * SAN as P?[NBRQK]?[a-h]?[1-8]?[-x:]?[a-h][1-8](=?[NBRQK]|\([NBRQ]\))? (promotion letter in
 * either case), parsed by hand: it runs for every move.
 */
function parseSan(core: string, line: number): MoveNode | undefined {
  const n = core.length;
  let i = 0;
  let role: Role = 'pawn';
  const c0 = core.charCodeAt(0);
  if (c0 === 80 /* P */) i = 1;
  else if (c0 >= 65 && c0 <= 90) {
    const r = ROLES[c0];
    if (!r || r === 'pawn') return;
    role = r;
    i = 1;
  }
  let end = n;
  let promotion: Role | undefined;
  const last = core.charCodeAt(n - 1);
  if (last === 41 /* ) */) {
    if (n < 3 || core.charCodeAt(n - 3) !== 40) return;
    promotion = ROLES[core.charCodeAt(n - 2)];
    if (!promotion || core.charCodeAt(n - 2) > 90) return;
    end = n - 3;
  } else if (!isRank(last)) {
    promotion = ROLES[last];
    if (!promotion || promotion === 'pawn') return;
    end = core.charCodeAt(n - 2) === 61 /* = */ ? n - 2 : n - 1;
  }
  if (end - i < 2) return;
  const toFile = core.charCodeAt(end - 2);
  const toRank = core.charCodeAt(end - 1);
  if (!isFile(toFile) || !isRank(toRank)) return;
  let j = i;
  let file = -1;
  let rank = -1;
  if (j < end - 2 && isFile(core.charCodeAt(j))) file = core.charCodeAt(j++) - 97;
  if (j < end - 2 && isRank(core.charCodeAt(j))) rank = core.charCodeAt(j++) - 49;
  if (j < end - 2) {
    const sep = core.charCodeAt(j);
    if (sep === 120 /* x */ || sep === 58 /* : */ || sep === 45 /* - */) j++;
  }
  if (j !== end - 2) return;
  const node = newNode(core, 'san', line);
  node.role = role;
  node.file = file;
  node.rank = rank;
  node.to = toFile - 97 + 8 * (toRank - 49);
  node.promotion = promotion;
  return node;
}

export function clip(s: string, max = 40): string {
  if (s.length <= max) return s;
  // Not between the two halves of a character beyond U+FFFF (an emoji): one half alone is no text, and a
  // reason holding it would print as U+FFFD, or as a lone "\ud83c" escape in the JSON output.
  const c = s.charCodeAt(max - 1);
  return `${s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max)}\u2026`;
}
