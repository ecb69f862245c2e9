// Attack questions that play.ts asks of a king's move and of castling, on chessops' public API.

import { bishopAttacks, kingAttacks, knightAttacks, pawnAttacks, rookAttacks } from 'chessops/attacks';
import type { Board } from 'chessops/board';
import { SquareSet } from 'chessops/squareSet';
import type { Color } from 'chessops/types';
import { sideOf } from './board-sets.ts';

const WHITE_PAWN_ATTACKS = Array.from({ length: 64 }, (_, square) => pawnAttacks('white', square));
const BLACK_PAWN_ATTACKS = Array.from({ length: 64 }, (_, square) => pawnAttacks('black', square));

/** chessops' pawnAttacks from a table per color: its own table is read keyed by color (see board-sets.ts). */
export function pawnAttacksBy(color: Color, square: number): SquareSet {
  return (color === 'white' ? WHITE_PAWN_ATTACKS : BLACK_PAWN_ATTACKS)[square] as SquareSet;
}

/** Each square's files and ranks, and its diagonals, to the board's edges (what a slider sees on an empty board). */
const ROOK_LINES = Array.from({ length: 64 }, (_, square) => rookAttacks(square, SquareSet.empty()));
const BISHOP_LINES = Array.from({ length: 64 }, (_, square) => bishopAttacks(square, SquareSet.empty()));

/**
 * Whether a piece of `by` attacks `square` when `occupied` are the occupied squares: chessops'
 * pos.kingAttackers(square, by, occupied).nonEmpty(). That one computes the slider attacks from `square`
 * every time; here they are computed only when a slider of `by` stands on one of its lines at all.
 */
export function isAttacked(board: Board, square: number, by: Color, occupied: SquareSet): boolean {
  const side = sideOf(board, by);
  if (knightAttacks(square).intersect(board.knight).intersects(side)) return true;
  if (kingAttacks(square).intersect(board.king).intersects(side)) return true;
  if (
    pawnAttacksBy(by === 'white' ? 'black' : 'white', square)
      .intersect(board.pawn)
      .intersects(side)
  )
    return true;
  const queens = board.queen.intersect(side);
  const rooks = board.rook.intersect(side).union(queens);
  if ((ROOK_LINES[square] as SquareSet).intersects(rooks) && rookAttacks(square, occupied).intersects(rooks))
    return true;
  const bishops = board.bishop.intersect(side).union(queens);
  return (
    (BISHOP_LINES[square] as SquareSet).intersects(bishops) &&
    bishopAttacks(square, occupied).intersects(bishops)
  );
}
