// Syntax of one game: tag pairs and a movetext tree (moves, comments, NAGs, variations).
// Moves are classified here but not checked against a position; that is play.ts's job.
//
// Stricter than chessops' parser on purpose: an unknown token ("Sf3", "<br", "3/2") makes
// the game a reject with a reason instead of being skipped, so nothing is silently lost.

export type MoveKind = 'san' | 'castle' | 'coord' | 'drop' | 'null';

export interface ParsedMove {
  /** Move as written, without move number, check marks and suffix annotations; castling as O-O / O-O-O. */
  token: string;
  kind: MoveKind;
  /** 1-based source line, for messages. */
  line: number;
  nags?: number[];
  /** Comments after the move. */
  comments?: string[];
  /** Comments before the move (first move of a variation only). */
  startComments?: string[];
  /** Variations: alternatives to this move, each a list of moves starting at this move's ply. */
  variations?: ParsedMove[][];
}

export interface ParsedGame {
  /** Tag pairs in source order; for a repeated name the last value wins (first position kept). */
  tags: Map<string, string>;
  /** Comments before the first move. */
  comments: string[];
  moves: ParsedMove[];
  /** Result terminator of the main line, if any. */
  terminator: string | undefined;
}

export type ParseResult = { ok: true; game: ParsedGame } | { ok: false; reason: string };

/** Suffix annotations and traditional evaluation symbols, as NAG numbers. */
const SYMBOL_NAGS: Record<string, number> = {
  '!': 1,
  '?': 2,
  '!!': 3,
  '??': 4,
  '!?': 5,
  '?!': 6,
  '□': 7,
  '=': 10,
  '∞': 13,
  '+=': 14,
  '+/=': 14,
  '⩲': 14,
  '=+': 15,
  '=/+': 15,
  '⩱': 15,
  '+/-': 16,
  '±': 16,
  '-/+': 17,
  '∓': 17,
  '+-': 18,
  '+−': 18,
  '-+': 19,
  '−+': 19,
  '=/∞': 44,
  N: 146,
};

const TERMINATORS = new Set(['1-0', '0-1', '1/2-1/2', '*']);
const NULL_MOVES = new Set(['--', 'Z0', '0000', '@@@@']);

const SAN_RE = /^(?:P?([NBRQK])?([a-h])?([1-8])?[-x:]?([a-h][1-8])(?:=?([NBRQKnbrqk])|\(([NBRQ])\))?)$/;
const COORD_RE = /^([a-h][1-8])[-x]?([a-h][1-8])=?([nbrqNBRQ])?$/;
const CASTLE_RE = /^([O0o])-\1(-\1)?$/;
const DROP_RE = /^([PNBRQK]?)@([a-h][1-8])$/;
const SUFFIX_RE = /[!?]{1,2}$/;
const CHECK_RE = /(?:[+#]|\+\+|e\.p\.|ep)+$/;
const MOVE_NUMBER_RE = /^\d+\.*$|^\.{2,}$|^…$/;
const NUMBERED_RE = /^\d+(?:\.+|…)(.+)$/;

const TAG_RE = /\[\s*([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s*"((?:[^"\\]|\\.)*)"\s*\]/y;

interface Frame {
  moves: ParsedMove[];
  /** Comments and NAGs seen before this line's next move (variation start). */
  pendingComments?: string[];
  pendingNags?: number[];
}

class ParseError extends Error {}

export function parseGame(text: string): ParseResult {
  try {
    return { ok: true, game: new Parser(text).parse() };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, reason: err.message };
    throw err;
  }
}

class Parser {
  private readonly text: string;
  private pos = 0;
  private line = 1;
  private readonly tags = new Map<string, string>();
  private readonly comments: string[] = [];
  private readonly stack: Frame[] = [{ moves: [] }];
  private terminator: string | undefined;

  constructor(text: string) {
    this.text = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  parse(): ParsedGame {
    this.parseTags();
    this.parseMovetext();
    const root = this.stack[0] as Frame;
    return { tags: this.tags, comments: this.comments, moves: root.moves, terminator: this.terminator };
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
      if (value.indexOf('\n') !== -1) this.fail(`unterminated tag value at line ${this.line}`);
      this.tags.set(m[1] as string, value);
      this.pos = TAG_RE.lastIndex;
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
        const close = t.indexOf('}', this.pos + 1);
        if (close === -1) this.fail(`unterminated comment starting at line ${this.line}`);
        const body = t.slice(this.pos + 1, close);
        this.countLines(body);
        this.addComment(body);
        this.pos = close + 1;
      } else if (c === 40) {
        // '('
        const frame = this.top();
        const last = frame.moves[frame.moves.length - 1];
        if (!last) this.fail(`variation before any move at line ${this.line}`);
        const variation: ParsedMove[] = [];
        if (last.variations) last.variations.push(variation);
        else last.variations = [variation];
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
        while (end < t.length) {
          const d = t.charCodeAt(end);
          if (
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
          )
            break;
          end++;
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
    const owner = parent.moves[parent.moves.length - 1] as ParsedMove;
    const variations = owner.variations as ParsedMove[][];
    // Comments and NAGs left at the end of an empty variation have no move to belong to.
    if (frame.moves.length === 0) variations.pop();
    if (variations.length === 0) delete owner.variations;
  }

  private handleWord(word: string): void {
    if (TERMINATORS.has(word)) {
      // Inside a variation a terminator means nothing (some annotators end lines with one).
      if (this.stack.length === 1) {
        if (this.terminator !== undefined)
          this.fail(`second result terminator '${word}' at line ${this.line}`);
        this.terminator = word;
      }
      return;
    }
    if (this.terminator !== undefined && this.stack.length === 1) {
      this.fail(`text after the result terminator at line ${this.line}: ${clip(word)}`);
    }
    if (MOVE_NUMBER_RE.test(word)) return;
    const nag = SYMBOL_NAGS[word];
    if (nag !== undefined) {
      this.addNag(nag);
      return;
    }
    const numbered = NUMBERED_RE.exec(word);
    let move = numbered ? (numbered[1] as string) : word;
    // Check marks and suffix annotations may come in either order ("Qh4+!", "Qh4!+").
    move = move.replace(CHECK_RE, '');
    const suffix = SUFFIX_RE.exec(move);
    let suffixNag: number | undefined;
    if (suffix) {
      suffixNag = SYMBOL_NAGS[suffix[0]];
      move = move.slice(0, suffix.index).replace(CHECK_RE, '');
    }
    const parsed = classify(move);
    if (!parsed) this.fail(`unexpected token '${clip(word)}' at line ${this.line}`);
    this.addMove(parsed.token, parsed.kind);
    if (suffixNag !== undefined) this.addNag(suffixNag);
  }

  private addMove(token: string, kind: MoveKind): void {
    const frame = this.top();
    const move: ParsedMove = { token, kind, line: this.line };
    if (frame.pendingComments) {
      move.startComments = frame.pendingComments;
      frame.pendingComments = undefined;
    }
    if (frame.pendingNags) {
      move.nags = frame.pendingNags;
      frame.pendingNags = undefined;
    }
    frame.moves.push(move);
  }

  private addNag(nag: number): void {
    if (!Number.isSafeInteger(nag) || nag > 255) this.fail(`invalid NAG $${nag} at line ${this.line}`);
    const frame = this.top();
    const last = frame.moves[frame.moves.length - 1];
    // A NAG before the first move of a line (Informant style "($140 Qb5") annotates that move.
    if (!last) frame.pendingNags = append(frame.pendingNags, nag);
    else last.nags = append(last.nags, nag);
  }

  private addComment(raw: string): void {
    const text = cleanComment(raw);
    if (text === '') return;
    const frame = this.top();
    const last = frame.moves[frame.moves.length - 1];
    if (last) last.comments = append(last.comments, text);
    else if (this.stack.length === 1) this.comments.push(text);
    else frame.pendingComments = append(frame.pendingComments, text);
  }
}

/**
 * Comment text as stored and exported: whitespace runs collapsed to one space (the export
 * re-wraps lines, so line breaks cannot survive a round trip) and '}' made safe.
 */
export function cleanComment(raw: string): string {
  let text = raw.replace(/\s+/g, ' ').trim();
  if (text.indexOf('}') !== -1) text = text.replace(/\}/g, ')');
  return text;
}

/** Appends to an optional list, creating it on first use. */
function append<V>(list: V[] | undefined, value: V): V[] {
  if (!list) return [value];
  list.push(value);
  return list;
}

function classify(move: string): { token: string; kind: MoveKind } | undefined {
  if (move.length === 0) return;
  if (NULL_MOVES.has(move)) return { token: '--', kind: 'null' };
  const castle = CASTLE_RE.exec(move);
  if (castle) return { token: castle[2] ? 'O-O-O' : 'O-O', kind: 'castle' };
  const coord = COORD_RE.exec(move);
  if (coord) return { token: `${coord[1]}${coord[2]}${(coord[3] ?? '').toLowerCase()}`, kind: 'coord' };
  if (DROP_RE.test(move)) return { token: move, kind: 'drop' };
  const san = SAN_RE.exec(move);
  if (san) {
    const promotion = san[5] ?? san[6];
    // Keep the capture mark so messages quote the move as written.
    const capture = move.indexOf('x') !== -1 || move.indexOf(':') !== -1 ? 'x' : '';
    const promo = promotion ? `=${promotion.toUpperCase()}` : '';
    return { token: `${san[1] ?? ''}${san[2] ?? ''}${san[3] ?? ''}${capture}${san[4]}${promo}`, kind: 'san' };
  }
  return;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
