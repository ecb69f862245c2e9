// One game's text -> checked, normalised game (UCI main line, final FEN, export PGN).

import { Buffer } from 'node:buffer';
import type { Board } from 'chessops/board';
import type { Chess } from 'chessops/chess';
import type { SquareSet } from 'chessops/squareSet';
import { COLORS } from 'chessops/types';
import { makeSquare } from 'chessops/util';
import { backrankBits, sideOf } from './board-sets.ts';
import { exportResult, writeExportPgn } from './export-pgn.ts';
import { parseGame } from './parse.ts';
import { playLine } from './play.ts';
import type { NormalizedGame, NormalizeResult } from './types.ts';
import { startPosition } from './variants.ts';

/**
 * Parses and checks one game (text as cut by PgnSplitter).
 *
 * Decisions:
 * - A NUL character anywhere in the game's text rejects it.
 * - Every main-line move must be legal; the first illegal, ambiguous, null or drop move
 *   rejects the game with a reason naming the move and its ply.
 * - Variation moves are checked too. A variation is cut at its first bad move (illegal,
 *   ambiguous, or a null move, which annotators use for threats) and the game kept, with a
 *   warning: the main line and the result are what users import. pgn-extract 19.04 accepts
 *   null moves in variations but silently leaves a game with an illegal variation move out
 *   of its output (docs/performance.md); that would lose a real game for a typo in an annotation. The
 *   export holds only legal moves, so it always reads back. (No corpus game is affected.)
 * - Comments keep their text with whitespace runs collapsed to one space (the export
 *   re-wraps lines); ';' comments become brace comments. Commands like [%clk] are kept.
 * - Warnings (the import reports them per game, like rejections): a variation cut, a tag
 *   repeated with another value (the last is kept), moves without a result terminator, a
 *   Result tag that holds no result or a terminator that differs from it.
 * - `tags` keeps every tag as written (source order, unescaped). The export fills missing
 *   Seven Tag Roster tags and takes the result from the Result tag, falling back to the
 *   terminator when the tag is missing or invalid (see exportResult).
 * - `fen` is chessops' FEN: en passant square only when a capture is legal, castling rights
 *   as KQkq where unambiguous (X-FEN), file letters otherwise; but the halfmove clock is not capped at 150.
 */
export function normalizeGame(raw: string, firstLine = 1): NormalizeResult {
  // The PGN standard allows no control characters but tab and newline, and PostgreSQL cannot store U+0000:
  // such a game is rejected here, on every store alike, rather than failing its whole import batch there.
  if (raw.includes('\u0000')) return { ok: false, reason: 'the game holds a NUL character (U+0000)' };
  const parsed = parseGame(raw, firstLine);
  if (!parsed.ok) return parsed;
  const game = parsed.game;
  if (game.tags.size === 0 && game.moves.length === 0) return { ok: false, reason: 'no game found' };

  const start = startPosition(game.tags);
  if (!start.ok) return start;
  const { pos, chess960 } = start.start;

  const warnings = game.warnings;
  const played = playLine(pos, game.moves, chess960, 0, warnings);
  if (played.error) return { ok: false, reason: played.error };
  // Kept, as a game ends at the next one's tags or the end of the input; but a missing terminator is how a
  // file cut off in the middle of a game looks.
  if (game.terminator === undefined && game.moves.length > 0)
    warnings.push('no result terminator after the moves: the game may be cut off');

  const nodes = game.moves;
  const moves = nodes.map((node) => node.uci).join(' ');
  const result = exportResult(game.tags, game.terminator);
  // The export has one result: a Result tag or a terminator that says otherwise is not kept.
  const tag = game.tags.get('Result');
  if (tag !== undefined && tag.trim() !== result)
    warnings.push(`Result tag "${tag}" is not a result: the game's is ${result}`);
  else if (game.terminator !== undefined && game.terminator !== result)
    warnings.push(
      `result terminator ${game.terminator} differs from the Result tag: the game's is ${result}`,
    );
  const pgn = writeExportPgn(game.tags, { comments: game.comments, moves: nodes }, result);
  const normalized: NormalizedGame = {
    tags: game.tags,
    moves,
    fen: fenOf(pos),
    plies: nodes.length,
    pgn,
    result,
    chess960,
  };
  if (warnings.length > 0) normalized.warnings = warnings;
  return { ok: true, game: normalized };
}

const FILE_LETTERS = 'ABCDEFGH';

/** Scratch: the FEN letter's code on each square while boardFen runs (0 when empty). */
const CODES = new Uint8Array(64);
/** Scratch: the board FEN's characters (at most 8 per rank and 7 slashes). */
const OUT = Buffer.alloc(71);

/** Marks the squares of `set` in CODES with the white piece's letter `code`, or the black one's. */
function mark(set: SquareSet, white: SquareSet, code: number): void {
  for (let lo = set.lo; lo !== 0; lo &= lo - 1) {
    const square = 31 - Math.clz32(lo & -lo);
    CODES[square] = (white.lo >>> square) & 1 ? code : code + 32;
  }
  for (let hi = set.hi; hi !== 0; hi &= hi - 1) {
    const square = 31 - Math.clz32(hi & -hi);
    CODES[square + 32] = (white.hi >>> square) & 1 ? code : code + 32;
  }
}

/**
 * The board part of a FEN, as chessops' makeBoardFen writes it (Chess positions have no promoted
 * pieces to mark). Letters are put on squares one piece set at a time and the text made at once, from
 * bytes (ASCII): cheaper than asking each square for its color and role and adding to a string per square,
 * and than String.fromCharCode over an array of codes (docs/performance.md).
 */
function boardFen(board: Board): string {
  const white = board.white;
  mark(board.pawn, white, 80); // P
  mark(board.knight, white, 78); // N
  mark(board.bishop, white, 66); // B
  mark(board.rook, white, 82); // R
  mark(board.queen, white, 81); // Q
  mark(board.king, white, 75); // K
  const out = OUT;
  let n = 0;
  for (let rank = 7; rank >= 0; rank--) {
    let empty = 0;
    for (let square = rank * 8; square < rank * 8 + 8; square++) {
      const code = CODES[square] as number;
      if (code === 0) {
        empty++;
        continue;
      }
      CODES[square] = 0; // clean for the next board
      if (empty > 0) out[n++] = 48 + empty;
      empty = 0;
      out[n++] = code;
    }
    if (empty > 0) out[n++] = 48 + empty;
    if (rank > 0) out[n++] = 47; // '/'
  }
  return out.toString('latin1', 0, n);
}

/**
 * chessops' makeCastlingFen, on the square sets' bits (it iterates the rights with a generator): for each
 * color, the castling rooks from the h-file down, as K/Q when the outermost rook on that side of the king,
 * else as their file letter.
 */
function castlingFen(board: Board, rights: SquareSet): string {
  let fen = '';
  for (const color of COLORS) {
    let castling = backrankBits(rights, color);
    if (castling === 0) continue;
    const king = board.kingOf(color);
    const kingFile = king !== undefined && king >> 3 === (color === 'white' ? 0 : 7) ? king & 7 : -1;
    const rooks = backrankBits(board.rook, color) & backrankBits(sideOf(board, color), color);
    const firstRook = rooks === 0 ? -1 : 31 - Math.clz32(rooks & -rooks);
    const lastRook = rooks === 0 ? -1 : 31 - Math.clz32(rooks);
    while (castling !== 0) {
      const file = 31 - Math.clz32(castling);
      castling &= ~(1 << file);
      let letter: string;
      if (file === firstRook && kingFile !== -1 && file < kingFile) letter = 'Q';
      else if (file === lastRook && kingFile !== -1 && kingFile < file) letter = 'K';
      else letter = FILE_LETTERS[file] as string;
      fen += color === 'white' ? letter : letter.toLowerCase();
    }
  }
  return fen || '-';
}

/**
 * chessops' makeFen(pos.toSetup()) for standard and Chess960 positions (no pockets, no check counts),
 * without toSetup's copy of the board nor its cap on the halfmove clock. toSetup is still asked for the en
 * passant square when there is one: it keeps it only when a capture there is legal.
 */
function fenOf(pos: Chess): string {
  const epSquare = pos.epSquare === undefined ? undefined : pos.toSetup().epSquare;
  const ep = epSquare === undefined ? '-' : makeSquare(epSquare);
  const castling = castlingFen(pos.board, pos.castles.castlingRights);
  // The halfmove clock as it is: toSetup caps it at 150, where the 75-move rule ends a game, which would
  // misstate games that go on without a capture or pawn move (6 master games of the pgnmentor collection: 154
  // to 167 half-moves; python-chess and pgn-extract count on). makeFen caps the fullmove number at 9999, as
  // parseFen takes no more.
  const halfmoves = Math.max(0, pos.halfmoves);
  const fullmoves = Math.max(1, Math.min(pos.fullmoves, 9999));
  return `${boardFen(pos.board)} ${pos.turn[0]} ${castling} ${ep} ${halfmoves} ${fullmoves}`;
}
