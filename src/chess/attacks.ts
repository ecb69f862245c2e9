// Attack questions that play.ts asks for every move, answered by walking rays square by square.
//
// chessops computes slider attacks with hyperbola quintessence on immutable 64-bit square sets, which
// allocates about ten objects per call, and checking one move asked for several such calls. Here a bit
// mask first tells whether a line holds a piece of interest at all (usually not), and only then is the
// line walked from the square outward to its first occupied square. Nothing is allocated on the way.

import { kingAttacks, knightAttacks, pawnAttacks } from 'chessops/attacks';
import type { Board } from 'chessops/board';
import { SquareSet } from 'chessops/squareSet';
import type { Color, Role } from 'chessops/types';

/** Directions as (file, rank) steps: 0-3 orthogonal (rook), 4-7 diagonal (bishop). */
const DIRECTIONS: readonly [number, number][] = [
  [0, 1],
  [0, -1],
  [1, 0],
  [-1, 0],
  [1, 1],
  [1, -1],
  [-1, 1],
  [-1, -1],
];
const ORTHOGONAL = [0, 1, 2, 3];
const DIAGONAL = [4, 5, 6, 7];
const ALL = [0, 1, 2, 3, 4, 5, 6, 7];

/** RAYS[square * 8 + direction]: the squares from `square` (exclusive) outward to the board's edge. */
const RAYS: Int8Array[] = [];
/** The same rays as bit masks of the low and high 32 squares. */
const RAY_LO = new Int32Array(64 * 8);
const RAY_HI = new Int32Array(64 * 8);
for (let square = 0; square < 64; square++) {
  for (const [df, dr] of DIRECTIONS) {
    const ray: number[] = [];
    let lo = 0;
    let hi = 0;
    let file = (square & 7) + df;
    let rank = (square >> 3) + dr;
    while (file >= 0 && file < 8 && rank >= 0 && rank < 8) {
      const s = file + 8 * rank;
      ray.push(s);
      if (s < 32) lo |= 1 << s;
      else hi |= 1 << (s - 32);
      file += df;
      rank += dr;
    }
    RAY_LO[RAYS.length] = lo;
    RAY_HI[RAYS.length] = hi;
    RAYS.push(Int8Array.from(ray));
  }
}

const EMPTY = SquareSet.empty();

function has(set: SquareSet, square: number): boolean {
  return ((square < 32 ? set.lo >>> square : set.hi >>> (square - 32)) & 1) !== 0;
}

/** Whether three sets share a square. */
function meet(a: SquareSet, b: SquareSet, c: SquareSet): boolean {
  return (a.lo & b.lo & c.lo) !== 0 || (a.hi & b.hi & c.hi) !== 0;
}

/** Whether the line from `square` in `direction` holds a square of both `a` and `b`. */
function onRay(square: number, direction: number, a: SquareSet, b: SquareSet): boolean {
  const i = square * 8 + direction;
  return ((RAY_LO[i] as number) & a.lo & b.lo) !== 0 || ((RAY_HI[i] as number) & a.hi & b.hi) !== 0;
}

/** The first square of `occupied` on the line from `square` in `direction`, or -1. */
function firstOnRay(square: number, direction: number, occupied: SquareSet): number {
  const ray = RAYS[square * 8 + direction] as Int8Array;
  for (let i = 0; i < ray.length; i++) {
    const s = ray[i] as number;
    if (has(occupied, s)) return s;
  }
  return -1;
}

/** Rooks and queens for the orthogonal directions, bishops and queens for the diagonal ones. */
function slidersOf(board: Board, direction: number): SquareSet {
  return direction < 4 ? board.rook.union(board.queen) : board.bishop.union(board.queen);
}

/** Whether a piece of `by` attacks `square` when `occupied` are the occupied squares. */
export function isAttacked(board: Board, square: number, by: Color, occupied: SquareSet): boolean {
  const side = board[by];
  if (meet(knightAttacks(square), board.knight, side)) return true;
  if (meet(kingAttacks(square), board.king, side)) return true;
  if (meet(pawnAttacks(by === 'white' ? 'black' : 'white', square), board.pawn, side)) return true;
  for (let d = 0; d < 8; d++) {
    const sliders = slidersOf(board, d);
    if (!onRay(square, d, sliders, side)) continue;
    const s = firstOnRay(square, d, occupied);
    if (s !== -1 && has(side, s) && has(sliders, s)) return true;
  }
  return false;
}

/** Squares of `color`'s pieces of `role` (bishop, rook or queen) that see `to` along a free line. */
export function slidersReaching(board: Board, color: Color, role: Role, to: number, out: number[]): number[] {
  out.length = 0;
  const pieces = board[role];
  const side = board[color];
  for (const d of role === 'rook' ? ORTHOGONAL : role === 'bishop' ? DIAGONAL : ALL) {
    if (!onRay(to, d, pieces, side)) continue;
    const s = firstOnRay(to, d, board.occupied);
    if (s !== -1 && has(side, s) && has(pieces, s)) out.push(s);
  }
  return out;
}

/**
 * chessops' Context.checkers and Context.blockers for the king on `king`: the pieces of `them` that give
 * check, and the pieces (of either side) that stand alone between the king and a slider of `them`.
 */
export function checkersAndBlockers(
  board: Board,
  king: number,
  them: Color,
): { checkers: SquareSet; blockers: SquareSet } {
  const side = board[them];
  const occupied = board.occupied;
  const knights = knightAttacks(king).intersect(board.knight);
  const pawns = pawnAttacks(them === 'white' ? 'black' : 'white', king).intersect(board.pawn);
  const kings = kingAttacks(king).intersect(board.king);
  let checkers =
    meet(knights, side, side) || meet(pawns, side, side) || meet(kings, side, side)
      ? knights.union(pawns).union(kings).intersect(side)
      : EMPTY;
  let blockers = EMPTY;
  for (let d = 0; d < 8; d++) {
    const sliders = slidersOf(board, d);
    if (!onRay(king, d, sliders, side)) continue;
    const first = firstOnRay(king, d, occupied);
    if (first === -1) continue;
    if (has(side, first) && has(sliders, first)) {
      checkers = checkers.with(first);
      continue;
    }
    const second = firstOnRay(first, d, occupied);
    if (second !== -1 && has(side, second) && has(sliders, second)) blockers = blockers.with(first);
  }
  return { checkers, blockers };
}
