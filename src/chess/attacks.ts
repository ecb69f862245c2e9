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
import { piecesOf, sideOf } from './board-sets.ts';

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

const WHITE_PAWN_ATTACKS = Array.from({ length: 64 }, (_, square) => pawnAttacks('white', square));
const BLACK_PAWN_ATTACKS = Array.from({ length: 64 }, (_, square) => pawnAttacks('black', square));

/** chessops' pawnAttacks from a table per color: its own table is read keyed by color (see board-sets.ts). */
export function pawnAttacksBy(color: Color, square: number): SquareSet {
  return (color === 'white' ? WHITE_PAWN_ATTACKS : BLACK_PAWN_ATTACKS)[square] as SquareSet;
}

function has(set: SquareSet, square: number): boolean {
  return holds(set.lo, set.hi, square);
}

/** Whether the line from `square` in `direction` holds a square of both `side` and (lo, hi). */
function onRay(square: number, direction: number, side: SquareSet, lo: number, hi: number): boolean {
  const i = square * 8 + direction;
  return ((RAY_LO[i] as number) & side.lo & lo) !== 0 || ((RAY_HI[i] as number) & side.hi & hi) !== 0;
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

/** Whether (lo, hi) holds `square`. */
function holds(lo: number, hi: number, square: number): boolean {
  return ((square < 32 ? lo >>> square : hi >>> (square - 32)) & 1) !== 0;
}

/**
 * What leapersOn found, as plain numbers: a square set object per call would be garbage made on every move,
 * for an import worker's collector to sweep (docs/performance.md).
 */
let leapersLo = 0;
let leapersHi = 0;

/**
 * Sets (leapersLo, leapersHi) to the knights, kings and pawns (of either color) on the squares from which
 * such a piece of `by` would attack `square`; the caller keeps those of `by`.
 */
function leapersOn(board: Board, square: number, by: Color): void {
  const n = knightAttacks(square);
  const k = kingAttacks(square);
  const p = pawnAttacksBy(by === 'white' ? 'black' : 'white', square);
  leapersLo = (n.lo & board.knight.lo) | (k.lo & board.king.lo) | (p.lo & board.pawn.lo);
  leapersHi = (n.hi & board.knight.hi) | (k.hi & board.king.hi) | (p.hi & board.pawn.hi);
}

/** What slidersOn found, as plain numbers: rooks and queens (directions 0-3), bishops and queens (4-7). */
let orthoLo = 0;
let orthoHi = 0;
let diagLo = 0;
let diagHi = 0;

/** Sets the slider numbers above from the board (both colors). */
function slidersOn(board: Board): void {
  const queen = board.queen;
  orthoLo = board.rook.lo | queen.lo;
  orthoHi = board.rook.hi | queen.hi;
  diagLo = board.bishop.lo | queen.lo;
  diagHi = board.bishop.hi | queen.hi;
}

/** Whether a piece of `by` attacks `square` when `occupied` are the occupied squares. */
export function isAttacked(board: Board, square: number, by: Color, occupied: SquareSet): boolean {
  const side = sideOf(board, by);
  leapersOn(board, square, by);
  if ((leapersLo & side.lo) !== 0 || (leapersHi & side.hi) !== 0) return true;
  slidersOn(board);
  for (let d = 0; d < 8; d++) {
    const slidersLo = d < 4 ? orthoLo : diagLo;
    const slidersHi = d < 4 ? orthoHi : diagHi;
    if (!onRay(square, d, side, slidersLo, slidersHi)) continue;
    const s = firstOnRay(square, d, occupied);
    if (s !== -1 && has(side, s) && holds(slidersLo, slidersHi, s)) return true;
  }
  return false;
}

/**
 * Writes to `out` the squares of `color`'s pieces of `role` (bishop, rook or queen) that see `to` along a
 * free line, and returns how many.
 */
export function slidersReaching(board: Board, color: Color, role: Role, to: number, out: Int8Array): number {
  let n = 0;
  const pieces = piecesOf(board, role);
  const side = sideOf(board, color);
  for (const d of role === 'rook' ? ORTHOGONAL : role === 'bishop' ? DIAGONAL : ALL) {
    if (!onRay(to, d, side, pieces.lo, pieces.hi)) continue;
    const s = firstOnRay(to, d, board.occupied);
    if (s !== -1 && has(side, s) && has(pieces, s)) out[n++] = s;
  }
  return n;
}

/**
 * chessops' Context.checkers and Context.blockers for the king on `king`, set on `out`: the pieces of
 * `them` that give check, and the pieces (of either side) that stand alone between the king and a slider
 * of `them`. Works on plain numbers and allocates a square set only for a non-empty result.
 */
export function checkersAndBlockers(
  board: Board,
  king: number,
  them: Color,
  out: { checkers: SquareSet; blockers: SquareSet },
): void {
  const side = sideOf(board, them);
  const occupied = board.occupied;
  leapersOn(board, king, them);
  let checkersLo = leapersLo & side.lo;
  let checkersHi = leapersHi & side.hi;
  let blockersLo = 0;
  let blockersHi = 0;
  slidersOn(board);
  for (let d = 0; d < 8; d++) {
    const slidersLo = d < 4 ? orthoLo : diagLo;
    const slidersHi = d < 4 ? orthoHi : diagHi;
    if (!onRay(king, d, side, slidersLo, slidersHi)) continue;
    const first = firstOnRay(king, d, occupied);
    if (first === -1) continue;
    if (has(side, first) && holds(slidersLo, slidersHi, first)) {
      if (first < 32) checkersLo |= 1 << first;
      else checkersHi |= 1 << (first - 32);
      continue;
    }
    const second = firstOnRay(first, d, occupied);
    if (second !== -1 && has(side, second) && holds(slidersLo, slidersHi, second)) {
      if (first < 32) blockersLo |= 1 << first;
      else blockersHi |= 1 << (first - 32);
    }
  }
  out.checkers = checkersLo === 0 && checkersHi === 0 ? EMPTY : new SquareSet(checkersLo, checkersHi);
  out.blockers = blockersLo === 0 && blockersHi === 0 ? EMPTY : new SquareSet(blockersLo, blockersHi);
}
