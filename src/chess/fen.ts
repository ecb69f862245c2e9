// A position's FEN as chessops' makeFen(pos.toSetup()) writes it, on chessops' public API, but for the
// halfmove clock (see fenOf). makeFen asks each square for its piece, an object each, and adds to a string per
// square: on the short games of an opening book that is about a quarter of the checking
// (docs/performance.md#chess-layer). Here a few bit tests of the board's sets give each square's letter and
// the text is made at once from bytes (ASCII). test/chess/fast-path.test.ts pins it against makeFen on the
// PGN corpus.

import { Buffer } from 'node:buffer';
import type { Board } from 'chessops/board';
import type { Chess } from 'chessops/chess';
import { SquareSet } from 'chessops/squareSet';
import { COLORS } from 'chessops/types';
import { makeSquare } from 'chessops/util';

/** Scratch: the board FEN's characters (at most 8 per rank and 7 slashes). */
const OUT = Buffer.alloc(71);

/** The board part of the FEN (a Chess position has no promoted pieces to mark with '~'). */
function boardFen(board: Board): string {
  const { occupied, white, pawn, knight, bishop, rook, queen } = board;
  const out = OUT;
  let n = 0;
  for (let rank = 7; rank >= 0; rank--) {
    let empty = 0;
    for (let square = rank * 8; square < rank * 8 + 8; square++) {
      if (!occupied.has(square)) {
        empty++;
        continue;
      }
      if (empty > 0) out[n++] = 48 + empty;
      empty = 0;
      // P, N, B, R, Q, K; lower case for black.
      const letter = pawn.has(square)
        ? 80
        : knight.has(square)
          ? 78
          : bishop.has(square)
            ? 66
            : rook.has(square)
              ? 82
              : queen.has(square)
                ? 81
                : 75;
      out[n++] = white.has(square) ? letter : letter + 32;
    }
    if (empty > 0) out[n++] = 48 + empty;
    if (rank > 0) out[n++] = 47; // '/'
  }
  return out.toString('latin1', 0, n);
}

const FILE_LETTERS = 'ABCDEFGH';

/**
 * chessops' makeCastlingFen without its generator: for each color, the castling rooks from the h-file down,
 * as K/Q when the outermost rook on that side of the king, else as their file letter.
 */
function castlingFen(board: Board, rights: SquareSet): string {
  let fen = '';
  for (const color of COLORS) {
    const backrank = SquareSet.backrank(color);
    let castling = rights.intersect(backrank);
    if (castling.isEmpty()) continue;
    const king = board.kingOf(color);
    const kingFile = king !== undefined && backrank.has(king) ? king & 7 : -1;
    const rooks = board.pieces(color, 'rook').intersect(backrank);
    const firstRook = rooks.first();
    const lastRook = rooks.last();
    for (let rook = castling.last(); rook !== undefined; rook = castling.last()) {
      castling = castling.without(rook);
      const file = rook & 7;
      let letter: string;
      if (rook === firstRook && kingFile !== -1 && file < kingFile) letter = 'Q';
      else if (rook === lastRook && kingFile !== -1 && kingFile < file) letter = 'K';
      else letter = FILE_LETTERS[file] as string;
      fen += color === 'white' ? letter : letter.toLowerCase();
    }
  }
  return fen || '-';
}

/**
 * makeFen(pos.toSetup()) for standard and Chess960 positions (no pockets, no check counts), without
 * toSetup's copy of the board nor its cap on the halfmove clock at 150, where the 75-move rule ends a game:
 * that would misstate games that go on without a capture or pawn move (6 master games of the pgnmentor
 * collection: 154 to 167 half-moves; python-chess and pgn-extract count on). toSetup is still asked for the
 * en passant square when there is one: it keeps it only when a capture there is legal. As makeFen does, the
 * halfmove clock and the fullmove number stop at 9999, the most that parseFen reads.
 */
export function fenOf(pos: Chess): string {
  const epSquare = pos.epSquare === undefined ? undefined : pos.toSetup().epSquare;
  const ep = epSquare === undefined ? '-' : makeSquare(epSquare);
  const castling = castlingFen(pos.board, pos.castles.castlingRights);
  const halfmoves = Math.max(0, Math.min(pos.halfmoves, 9999));
  const fullmoves = Math.max(1, Math.min(pos.fullmoves, 9999));
  return `${boardFen(pos.board)} ${pos.turn[0]} ${castling} ${ep} ${halfmoves} ${fullmoves}`;
}
