// The chess layer's fast path: the one module that reads chessops' square sets as their two 32-bit halves
// (SquareSet.lo, SquareSet.hi), builds them from numbers, or writes a position's fields in place of
// Position.play. Each export answers, for every move, a question that chessops' public API answers too, where
// chessops' answer costs more than 5% on the chess bench (docs/performance.md#chess-layer):
//
// - contextOf: Position.ctx() (the king, the checkers, the pinned pieces). chessops computes slider attacks
//   with hyperbola quintessence on immutable square sets, about ten objects per call and several calls per
//   ctx(); here a bit mask first tells whether a line holds a slider of the other side at all (usually not),
//   and only then is the line walked from the king outward. Nothing is allocated on the way.
// - reachingFrom: the squares from which a piece could move to a square, read off as numbers (chessops'
//   iterator is a generator: slow in hot loops).
// - playMove: Position.play for plain moves and captures (most moves), with one new square set per changed
//   set: chessops' Board.take and Board.set build a piece object and three sets each.
//
// test/chess/fast-path.test.ts pins every export against chessops' own functions on the PGN corpus, and
// checks that no other module of src/chess reads a square set's halves: after a chessops upgrade, that test
// says whether this module still agrees with it.

import { kingAttacks, knightAttacks } from 'chessops/attacks';
import type { Board } from 'chessops/board';
import type { Chess, Context } from 'chessops/chess';
import { SquareSet } from 'chessops/squareSet';
import type { Color, NormalMove, Role } from 'chessops/types';
import { pawnAttacksBy } from './attacks.ts';
import { piecesOf, roleAt, sideOf } from './board-sets.ts';

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

/** Whether (lo, hi) holds `square`. */
function holds(lo: number, hi: number, square: number): boolean {
  return ((square < 32 ? lo >>> square : hi >>> (square - 32)) & 1) !== 0;
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

/**
 * Writes the squares of the set (lo, hi) to `out`, lowest first, and returns how many. `out` is a fixed typed
 * array, not an array emptied with `length = 0`: that store is a runtime call in V8, and this runs several
 * times a move.
 */
function squaresOf(lo: number, hi: number, out: Int8Array): number {
  let n = 0;
  while (lo !== 0) {
    out[n++] = 31 - Math.clz32(lo & -lo);
    lo &= lo - 1;
  }
  while (hi !== 0) {
    out[n++] = 63 - Math.clz32(hi & -hi);
    hi &= hi - 1;
  }
  return n;
}

/** The only square of the set (lo, hi), or undefined when it has none or several. */
function singleSquare(lo: number, hi: number): number | undefined {
  if (hi === 0) return lo !== 0 && (lo & (lo - 1)) === 0 ? 31 - Math.clz32(lo) : undefined;
  return lo === 0 && (hi & (hi - 1)) === 0 ? 63 - Math.clz32(hi) : undefined;
}

/**
 * The knights, kings and pawns (of either color) on the squares from which such a piece of `by` would attack
 * `king`, as plain numbers: a square set object per call would be garbage made on every move, for an import
 * worker's collector to sweep.
 */
let leapersLo = 0;
let leapersHi = 0;

function leapersOn(board: Board, king: number, by: Color): void {
  const n = knightAttacks(king);
  const k = kingAttacks(king);
  const p = pawnAttacksBy(by === 'white' ? 'black' : 'white', king);
  leapersLo = (n.lo & board.knight.lo) | (k.lo & board.king.lo) | (p.lo & board.pawn.lo);
  leapersHi = (n.hi & board.knight.hi) | (k.hi & board.king.hi) | (p.hi & board.pawn.hi);
}

/**
 * chessops' Context.checkers and Context.blockers for the king on `king`, set on `out`: the pieces of `them`
 * that give check, and the pieces (of either side) that stand alone between the king and a slider of `them`
 * (a slider that gives check too, when another stands behind it).
 * Allocates a square set only for a non-empty result.
 */
function checkersAndBlockers(board: Board, king: number, them: Color, out: Context): void {
  const side = sideOf(board, them);
  const occupied = board.occupied;
  leapersOn(board, king, them);
  let checkersLo = leapersLo & side.lo;
  let checkersHi = leapersHi & side.hi;
  let blockersLo = 0;
  let blockersHi = 0;
  const queen = board.queen;
  const orthoLo = board.rook.lo | queen.lo;
  const orthoHi = board.rook.hi | queen.hi;
  const diagLo = board.bishop.lo | queen.lo;
  const diagHi = board.bishop.hi | queen.hi;
  for (let d = 0; d < 8; d++) {
    const slidersLo = d < 4 ? orthoLo : diagLo;
    const slidersHi = d < 4 ? orthoHi : diagHi;
    if (!onRay(king, d, side, slidersLo, slidersHi)) continue;
    const first = firstOnRay(king, d, occupied);
    if (first === -1) continue;
    if (has(side, first) && holds(slidersLo, slidersHi, first)) {
      if (first < 32) checkersLo |= 1 << first;
      else checkersHi |= 1 << (first - 32);
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

/**
 * pos.ctx() without its slider attack sets, written into `ctx` (which a line of moves reuses from move to
 * move) and returned. A position without its king (none in a Chess position) gets pos.ctx() itself.
 */
export function contextOf(pos: Chess, ctx: Context): Context {
  const board = pos.board;
  const side = sideOf(board, pos.turn);
  const king = singleSquare(board.king.lo & side.lo, board.king.hi & side.hi);
  if (king === undefined) return pos.ctx();
  ctx.king = king;
  ctx.variantEnd = false;
  ctx.mustCapture = false;
  checkersAndBlockers(board, king, pos.turn === 'white' ? 'black' : 'white', ctx);
  return ctx;
}

/**
 * Writes to `out` the squares of `color`'s pieces of `role` (bishop, rook or queen) that see `to` along a free
 * line, and returns how many.
 */
function slidersReaching(board: Board, color: Color, role: Role, to: number, out: Int8Array): number {
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
 * Writes to `out` the squares from which a `role` piece of the side to move could reach `to` (pseudo-legal:
 * pawns from their file too, whatever stands between), lowest first but for sliders, and returns how many.
 * In chessops' terms: the pieces of `role` of the side to move within the role's attacks from `to` (a pawn
 * of the other side's), and for pawns within `to`'s file as well.
 */
export function reachingFrom(pos: Chess, role: Role, to: number, out: Int8Array): number {
  let from: SquareSet;
  switch (role) {
    case 'pawn': {
      const file = 0x01010101 << (to & 7);
      const captures = pawnAttacksBy(pos.turn === 'white' ? 'black' : 'white', to);
      const pawns = pos.board.pawn;
      const side = sideOf(pos.board, pos.turn);
      return squaresOf(
        (file | captures.lo) & pawns.lo & side.lo,
        (file | captures.hi) & pawns.hi & side.hi,
        out,
      );
    }
    case 'knight':
      from = knightAttacks(to);
      break;
    case 'king':
      from = kingAttacks(to);
      break;
    default:
      return slidersReaching(pos.board, pos.turn, role, to, out);
  }
  const pieces = piecesOf(pos.board, role);
  const side = sideOf(pos.board, pos.turn);
  return squaresOf(from.lo & pieces.lo & side.lo, from.hi & pieces.hi & side.hi, out);
}

/** `set` with `square` removed, as a new set (chessops' sets are shared between positions: never mutated). */
function without(set: SquareSet, square: number): SquareSet {
  if (square < 32) return new SquareSet(set.lo & ~(1 << square), set.hi);
  return new SquareSet(set.lo, set.hi & ~(1 << (square - 32)));
}

/** `set` with `from` removed and `to` added, as a new set. */
function moved(set: SquareSet, from: number, to: number): SquareSet {
  let lo = set.lo;
  let hi = set.hi;
  if (from < 32) lo &= ~(1 << from);
  else hi &= ~(1 << (from - 32));
  if (to < 32) lo |= 1 << to;
  else hi |= 1 << (to - 32);
  return new SquareSet(lo, hi);
}

// The board's square set of a color or a role replaced, chosen by comparison rather than as board[color] =
// or board[role] =: a keyed store whose key changes goes megamorphic in V8 (see board-sets.ts).

function setSide(board: Board, color: Color, set: SquareSet): void {
  if (color === 'white') board.white = set;
  else board.black = set;
}

function setPieces(board: Board, role: Role, set: SquareSet): void {
  switch (role) {
    case 'pawn':
      board.pawn = set;
      break;
    case 'knight':
      board.knight = set;
      break;
    case 'bishop':
      board.bishop = set;
      break;
    case 'rook':
      board.rook = set;
      break;
    case 'queen':
      board.queen = set;
      break;
    case 'king':
      board.king = set;
      break;
  }
}

/** Whether `color` may still castle: a castling right on its back rank. */
function mayCastle(rights: SquareSet, color: Color): boolean {
  return (color === 'white' ? rights.lo & 0xff : rights.hi >>> 24) !== 0;
}

/**
 * pos.play(move) for the legal `move` of a `role` piece. Plain moves and captures are played here; castling,
 * en passant, promotions and boards with promoted pieces (none in a Chess position) go to pos.play.
 */
export function playMove(pos: Chess, move: NormalMove, role: Role): void {
  const { from, to } = move;
  const board = pos.board;
  const turn = pos.turn;
  if (
    move.promotion ||
    (role === 'pawn' && to === pos.epSquare) ||
    (role === 'king' && (sideOf(board, turn).has(to) || Math.abs(to - from) === 2)) ||
    board.promoted.nonEmpty()
  ) {
    pos.play(move);
    return;
  }
  const them = turn === 'white' ? 'black' : 'white';
  // The same state changes as Position.play, in its order.
  pos.epSquare = undefined;
  pos.halfmoves += 1;
  if (turn === 'black') pos.fullmoves += 1;
  pos.turn = them;
  if (role === 'pawn') {
    pos.halfmoves = 0;
    if (Math.abs(to - from) === 16 && from >= 8 && from <= 55) pos.epSquare = (from + to) >> 1;
  } else if (role === 'rook') pos.castles.discardRook(from);
  // Only while the side may still castle: discardColor reads keyed by color, slowly (see board-sets.ts).
  else if (role === 'king' && mayCastle(pos.castles.castlingRights, turn)) pos.castles.discardColor(turn);
  if (board.occupied.has(to)) {
    const captured = roleAt(board, to) as Role;
    setSide(board, them, without(sideOf(board, them), to));
    setPieces(board, captured, without(piecesOf(board, captured), to));
    board.occupied = without(board.occupied, from);
    pos.halfmoves = 0;
    if (captured === 'rook') pos.castles.discardRook(to);
  } else board.occupied = moved(board.occupied, from, to);
  setSide(board, turn, moved(sideOf(board, turn), from, to));
  setPieces(board, role, moved(piecesOf(board, role), from, to));
}
