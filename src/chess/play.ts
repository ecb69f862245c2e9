// Plays parsed moves on a position with full legality checks (chessops move generation)
// and fills in each node's canonical SAN, UCI and move number.
//
// SAN is written here rather than with chessops' makeSanAndPlay because that one asks for
// the game outcome (a full legal-move search) after every move; only a check needs that
// search, to tell '+' from '#'. The position context is also reused from one move to the
// next. Together this costs much less per move (docs/performance.md), with the same output.

import {
  between,
  bishopAttacks,
  kingAttacks,
  knightAttacks,
  queenAttacks,
  ray,
  rookAttacks,
} from 'chessops/attacks';
import type { Chess, Context } from 'chessops/chess';
import { SquareSet } from 'chessops/squareSet';
import type { NormalMove, Role } from 'chessops/types';
import { kingCastlesTo, rookCastlesTo } from 'chessops/util';
import { checkersAndBlockers, isAttacked, pawnAttacksBy, slidersReaching } from './attacks.ts';
import {
  backrankBits,
  piecesOf,
  roleAt,
  sanLetter,
  setPieces,
  setSide,
  sideOf,
  uciLetter,
} from './board-sets.ts';
import type { MoveNode } from './tree.ts';

const FILES = 'abcdefgh';
const SQUARES: string[] = Array.from({ length: 64 }, (_, sq) => `${FILES[sq & 7]}${(sq >> 3) + 1}`);
/** UCI of every move from * 64 + to, made once rather than per move. */
const UCI: string[] = Array.from({ length: 64 * 64 }, (_, i) => `${SQUARES[i >> 6]}${SQUARES[i & 63]}`);
const BACKRANKS = SquareSet.backranks();
/** The pieces (not pawns) in the order of pieceSanIndex. */
const SAN_PIECES: Role[] = ['knight', 'bishop', 'rook', 'queen', 'king'];
/**
 * SAN without disambiguation, promotion or suffix, made once: a piece's move by letter, capture and target
 * (PIECE_SAN[(piece * 2 + capture) * 64 + to]), a pawn's capture by file and target (PAWN_CAPTURE_SAN[file *
 * 64 + to]). Writing them per move would make a string or two for nearly every move.
 */
const PIECE_SAN: string[] = SAN_PIECES.flatMap((role) =>
  ['', 'x'].flatMap((x) => SQUARES.map((square) => `${sanLetter(role)}${x}${square}`)),
);
const PAWN_CAPTURE_SAN: string[] = [...FILES].flatMap((file) => SQUARES.map((square) => `${file}x${square}`));

/** The index of a piece (not a pawn) in SAN_PIECES. */
function pieceSanIndex(role: Role): number {
  switch (role) {
    case 'knight':
      return 0;
    case 'bishop':
      return 1;
    case 'rook':
      return 2;
    case 'queen':
      return 3;
    default:
      return 4;
  }
}

/**
 * Writes the squares of the set (lo, hi) to `out`, lowest first, and returns how many (chessops' iterator is
 * a generator: slow in hot loops). A fixed typed array, not an array emptied with `length = 0`: that store
 * is a runtime call in V8, and this runs several times a move.
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
/** The squares found by reachingFrom (or squaresOf): read them before asking again. */
const found = new Int8Array(64);

/** The only square of the set (lo, hi), or undefined when it has none or several. */
function singleSquare(lo: number, hi: number): number | undefined {
  if (hi === 0) return lo !== 0 && (lo & (lo - 1)) === 0 ? 31 - Math.clz32(lo) : undefined;
  return lo === 0 && (hi & (hi - 1)) === 0 ? 63 - Math.clz32(hi) : undefined;
}

/**
 * chessops' Position.ctx() (king, pinned pieces, checkers) without its slider attack sets: once per move.
 * Written into `ctx`, which a line of moves reuses from move to move (each line has its own).
 */
function context(pos: Chess, ctx: Context): Context {
  const board = pos.board;
  const side = sideOf(board, pos.turn);
  const king = singleSquare(board.king.lo & side.lo, board.king.hi & side.hi);
  if (king === undefined) return pos.ctx();
  ctx.king = king;
  checkersAndBlockers(board, king, pos.turn === 'white' ? 'black' : 'white', ctx);
  return ctx;
}

/** "12." for a white move, "12..." for a black move. */
function moveLabel(pos: Chess): string {
  return pos.turn === 'white' ? `${pos.fullmoves}.` : `${pos.fullmoves}...`;
}

/**
 * Other pieces that could legally make the last SAN move resolved (to the same square), for SAN
 * disambiguation, as the set (othersLo, othersHi); when othersKnown is false, computed from scratch.
 */
let othersKnown = false;
let othersLo = 0;
let othersHi = 0;

/** The move `node` stands for in `pos`, or why there is none. */
function resolve(pos: Chess, ctx: Context, node: MoveNode, ply: number): NormalMove | string {
  let move: NormalMove | undefined;
  othersKnown = false;
  switch (node.kind) {
    case 'san': {
      const found = resolveSan(pos, ctx, node);
      if (found === AMBIGUOUS) return `ambiguous move ${where(pos, node, ply)}`;
      move = found;
      break;
    }
    case 'castle':
      move = resolveCastle(pos, ctx, node.to === 6 ? 'h' : 'a');
      break;
    case 'coord':
      move = resolveCoordinates(pos, ctx, node);
      break;
    case 'null':
      return `null move at ${where(pos, node, ply)}`;
    case 'drop':
      return `piece drop ${where(pos, node, ply)}: drops exist only in Crazyhouse`;
  }
  return move ?? `illegal move ${where(pos, node, ply)}`;
}

function where(pos: Chess, node: MoveNode, ply: number): string {
  return `${moveLabel(pos)}${node.token} (ply ${ply}, line ${node.line})`;
}

/** Squares from which a `role` piece of the side to move could reach `to` (pseudo-legal): how many, in `found`. */
function reachingFrom(pos: Chess, role: Role, to: number): number {
  let from: SquareSet;
  switch (role) {
    case 'pawn': {
      // Pushes come from the file, captures from the squares a pawn of the other side would attack.
      const file = 0x01010101 << (to & 7);
      const captures = pawnAttacksBy(pos.turn === 'white' ? 'black' : 'white', to);
      const pawns = pos.board.pawn;
      const side = sideOf(pos.board, pos.turn);
      return squaresOf(
        (file | captures.lo) & pawns.lo & side.lo,
        (file | captures.hi) & pawns.hi & side.hi,
        found,
      );
    }
    case 'knight':
      from = knightAttacks(to);
      break;
    case 'king':
      from = kingAttacks(to);
      break;
    default:
      return slidersReaching(pos.board, pos.turn, role, to, found);
  }
  const pieces = piecesOf(pos.board, role);
  const side = sideOf(pos.board, pos.turn);
  return squaresOf(from.lo & pieces.lo & side.lo, from.hi & pieces.hi & side.hi, found);
}

/**
 * Whether the piece on `from`, which pseudo-legally reaches `to` (see reachingFrom), may move
 * there: the same checks as chessops' dests() without building every destination.
 */
function isLegalFrom(pos: Chess, ctx: Context, role: Role, from: number, to: number): boolean {
  const board = pos.board;
  if (sideOf(board, pos.turn).has(to)) return false;
  const king = ctx.king as number;
  if (role === 'king') {
    return !isAttacked(board, to, pos.turn === 'white' ? 'black' : 'white', board.occupied.without(from));
  }
  if (role === 'pawn') {
    if ((from & 7) !== (to & 7)) {
      if (to === pos.epSquare) return pos.dests(from, ctx).has(to); // en passant: chessops checks the discovered lines
      if (!board.occupied.has(to)) return false;
    } else {
      const step = pos.turn === 'white' ? 8 : -8;
      if (board.occupied.has(to)) return false;
      if (to !== from + step) {
        const home = pos.turn === 'white' ? from >> 3 === 1 : from >> 3 === 6;
        if (!home || to !== from + 2 * step || board.occupied.has(from + step)) return false;
      }
    }
  }
  if (ctx.checkers.nonEmpty()) {
    const checker = ctx.checkers.singleSquare();
    if (checker === undefined || !between(checker, king).with(checker).has(to)) return false;
  }
  return !ctx.blockers.has(from) || ray(from, king).has(to);
}

const AMBIGUOUS = 'ambiguous';

function resolveSan(pos: Chess, ctx: Context, node: MoveNode): NormalMove | typeof AMBIGUOUS | undefined {
  const role = node.role as Role;
  const to = node.to;
  const promotion = node.promotion;
  if (!!promotion !== (role === 'pawn' && BACKRANKS.has(to))) return;
  if (promotion === 'king' || promotion === 'pawn') return;
  // Squares of the pieces that can legally make the move, as a set (moversLo, moversHi).
  let moversLo = 0;
  let moversHi = 0;
  let from = -1;
  let count = 0;
  const candidates = reachingFrom(pos, role, to);
  for (let k = 0; k < candidates; k++) {
    const candidate = found[k] as number;
    if (role === 'pawn' && (candidate & 7) !== (to & 7) && !pos.board.occupied.has(to) && to !== pos.epSquare)
      continue;
    if (!isLegalFrom(pos, ctx, role, candidate, to)) continue;
    if (candidate < 32) moversLo |= 1 << candidate;
    else moversHi |= 1 << (candidate - 32);
    if (node.file >= 0 && (candidate & 7) !== node.file) continue;
    if (node.rank >= 0 && candidate >> 3 !== node.rank) continue;
    if (role === 'pawn' && node.file < 0 && (candidate & 7) !== (to & 7)) continue; // "d5" is no capture
    from = candidate;
    count++;
  }
  if (count > 1) return AMBIGUOUS;
  if (from === -1) return;
  othersKnown = true;
  othersLo = from < 32 ? moversLo & ~(1 << from) : moversLo;
  othersHi = from < 32 ? moversHi : moversHi & ~(1 << (from - 32));
  return { from, to, promotion };
}

/**
 * Castling as chessops represents it: king takes own rook. The checks of chessops' castlingDest, which
 * pos.dests(king) runs after generating every other king move, with attack tests that allocate nothing.
 */
function resolveCastle(pos: Chess, ctx: Context, side: 'a' | 'h'): NormalMove | undefined {
  const king = ctx.king;
  const rook = pos.castles.rook[pos.turn][side];
  if (king === undefined || rook === undefined || ctx.checkers.nonEmpty()) return;
  const board = pos.board;
  if (pos.castles.path[pos.turn][side].intersects(board.occupied)) return;
  const them = pos.turn === 'white' ? 'black' : 'white';
  const kingTo = kingCastlesTo(pos.turn, side);
  const occupied = board.occupied.without(king);
  const path = between(king, kingTo);
  const squares = squaresOf(path.lo, path.hi, found);
  for (let k = 0; k < squares; k++) if (isAttacked(board, found[k] as number, them, occupied)) return;
  const after = board.occupied.toggle(king).toggle(rook).toggle(rookCastlesTo(pos.turn, side));
  if (isAttacked(board, kingTo, them, after)) return;
  return { from: king, to: rook };
}

/**
 * Long algebraic / UCI input ("e2e4", "d7d8q", "e1g1", "e1h1"). A king moving onto its own
 * rook is king-takes-rook castling; a king moving to g/c on its back rank where a plain king
 * move cannot go is two-square castling. Both are accepted in standard and Chess960 games.
 */
function resolveCoordinates(pos: Chess, ctx: Context, node: MoveNode): NormalMove | undefined {
  const from = node.file + 8 * node.rank;
  const to = node.to;
  const piece = pos.board.get(from);
  if (!piece || piece.color !== pos.turn) return;
  const dests = pos.dests(from, ctx);
  if (piece.role === 'king' && !dests.has(to)) {
    if (node.promotion || from >> 3 !== to >> 3 || (to & 7) === (from & 7)) return;
    const side = to > from ? 'h' : 'a';
    if (kingCastlesTo(pos.turn, side) !== to) return;
    return resolveCastle(pos, ctx, side);
  }
  if (!dests.has(to)) return;
  const promotion = node.promotion;
  if (!!promotion !== (piece.role === 'pawn' && BACKRANKS.has(to))) return;
  if (promotion === 'king' || promotion === 'pawn') return;
  return { from, to, promotion };
}

/** SAN without check suffix, as chessops' makeSan writes it. `ctx` is the position's context. */
function sanWithoutSuffix(pos: Chess, ctx: Context, move: NormalMove, role: Role): string {
  const { from, to } = move;
  if (role === 'king' && sideOf(pos.board, pos.turn).has(to)) return to > from ? 'O-O' : 'O-O-O';
  const capture = pos.board.occupied.has(to) || (role === 'pawn' && (from & 7) !== (to & 7));
  if (!move.promotion) {
    if (role === 'pawn')
      return capture ? (PAWN_CAPTURE_SAN[(from & 7) * 64 + to] as string) : (SQUARES[to] as string);
    if (othersKnown && othersLo === 0 && othersHi === 0)
      return PIECE_SAN[(pieceSanIndex(role) * 2 + (capture ? 1 : 0)) * 64 + to] as string;
  }
  let san = sanLetter(role);
  if (role === 'pawn') {
    if (capture) san = FILES[from & 7] as string;
  } else if (othersKnown) {
    if (othersLo !== 0 || othersHi !== 0) san += disambiguation(new SquareSet(othersLo, othersHi), from);
  } else {
    let others: SquareSet;
    const occupied = pos.board.occupied;
    if (role === 'king') others = kingAttacks(to).intersect(pos.board.king);
    else if (role === 'queen') others = queenAttacks(to, occupied).intersect(pos.board.queen);
    else if (role === 'rook') others = rookAttacks(to, occupied).intersect(pos.board.rook);
    else if (role === 'bishop') others = bishopAttacks(to, occupied).intersect(pos.board.bishop);
    else others = knightAttacks(to).intersect(pos.board.knight);
    others = others.intersect(sideOf(pos.board, pos.turn)).without(from);
    if (others.nonEmpty()) {
      for (const other of others) if (!pos.dests(other, ctx).has(to)) others = others.without(other);
      if (others.nonEmpty()) san += disambiguation(others, from);
    }
  }
  if (capture) san += 'x';
  san += SQUARES[to];
  if (move.promotion) san += `=${sanLetter(move.promotion)}`;
  return san;
}

/** File, rank or both of `from`, whichever tells it apart from `others` (as chessops does). */
function disambiguation(others: SquareSet, from: number): string {
  let row = false;
  let column = others.intersects(SquareSet.fromRank(from >> 3));
  if (others.intersects(SquareSet.fromFile(from & 7))) row = true;
  else column = true;
  return (column ? (FILES[from & 7] as string) : '') + (row ? String((from >> 3) + 1) : '');
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

/**
 * pos.play(move) for the legal `move` of a `role` piece. Plain moves and captures (most moves) are
 * played here with one new square set per changed set: chessops' Board.take and Board.set build a
 * piece object and three sets each. Castling, en passant and promotions go to chessops.
 */
function play(pos: Chess, move: NormalMove, role: Role): void {
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
  else if (role === 'king' && backrankBits(pos.castles.castlingRights, turn) !== 0)
    pos.castles.discardColor(turn);
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

export interface LineResult {
  /** Why the line stops early (an illegal move); undefined when every move was played. */
  error?: string;
}

/**
 * Plays `line` from `pos` (mutated), filling in each node, with its variations on copies of
 * the position. `ply` is the number of plies before the line starts. The line stops at its
 * first illegal move, which is reported; the caller rejects the game for a main-line error.
 * A variation is cut at its first illegal move (nodes from there on removed, an emptied
 * variation dropped) and a warning recorded.
 */
export function playLine(
  pos: Chess,
  line: MoveNode[],
  chess960: boolean,
  ply: number,
  warnings: string[],
): LineResult {
  const lineCtx: Context = {
    king: undefined,
    blockers: SquareSet.empty(),
    checkers: SquareSet.empty(),
    variantEnd: false,
    mustCapture: false,
  };
  let ctx = context(pos, lineCtx);
  for (let i = 0; i < line.length; i++) {
    const node = line[i] as MoveNode;
    ply++;
    if (node.variations) playVariations(pos, node, chess960, ply - 1, warnings);
    const move = resolve(pos, ctx, node, ply);
    if (typeof move === 'string') {
      line.length = i;
      return { error: move };
    }
    // A SAN or castling move names its piece (and resolving it checked that piece is on `from`).
    const role = (node.kind === 'coord' ? roleAt(pos.board, move.from) : node.role) as Role;
    node.moveNumber = pos.fullmoves;
    node.white = pos.turn === 'white';
    let to = move.to;
    if (role === 'king' && !chess960 && sideOf(pos.board, pos.turn).has(to))
      to = kingCastlesTo(pos.turn, to > move.from ? 'h' : 'a');
    const uci = UCI[move.from * 64 + to] as string;
    node.uci = move.promotion ? uci + uciLetter(move.promotion) : uci;
    const san = sanWithoutSuffix(pos, ctx, move, role);
    play(pos, move, role);
    ctx = context(pos, lineCtx);
    node.san = ctx.checkers.isEmpty() ? san : pos.hasDests(ctx) ? `${san}+` : `${san}#`;
  }
  return {};
}

function playVariations(
  pos: Chess,
  node: MoveNode,
  chess960: boolean,
  ply: number,
  warnings: string[],
): void {
  const variations = node.variations as MoveNode[][];
  let kept = 0;
  for (const variation of variations) {
    const played = playLine(pos.clone(), variation, chess960, ply, warnings);
    if (played.error) warnings.push(`variation cut: ${played.error}`);
    if (variation.length > 0) variations[kept++] = variation;
  }
  variations.length = kept;
  if (kept === 0) node.variations = undefined;
}
