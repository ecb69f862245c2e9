// Plays parsed moves on a position with full legality checks (chessops move generation)
// and fills in each node's canonical SAN, UCI and move number.
//
// SAN is written here rather than with chessops' makeSanAndPlay because that one asks for
// the game outcome (a full legal-move search) after every move; only a check needs that
// search, to tell '+' from '#'. The position context is also reused from one move to the
// next. Together this costs much less per move (docs/performance.md), with the same output.
// The hot questions of every move (the context, the pieces that reach a square, playing the
// move) go to fast-path.ts; the rest is on chessops' public API. test/chess/fast-path.test.ts
// pins the SAN, the UCI and the moves accepted against chessops' own on the PGN corpus.

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
import { isAttacked } from './attacks.ts';
import { roleAt, sanLetter, sideOf, uciLetter } from './board-sets.ts';
import { contextOf, playMove, reachingFrom } from './fast-path.ts';
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

/** The squares found by reachingFrom: read them before asking again. */
const found = new Int8Array(64);

/** "12." for a white move, "12..." for a black move. */
function moveLabel(pos: Chess): string {
  return pos.turn === 'white' ? `${pos.fullmoves}.` : `${pos.fullmoves}...`;
}

/**
 * The pieces that can legally make the last SAN move resolved (to the same square), the mover among them:
 * the squares movers[0 .. moverCount - 1], for SAN disambiguation. When moversKnown is false, SAN writing
 * finds the other pieces itself.
 */
let moversKnown = false;
const movers = new Int8Array(64);
let moverCount = 0;

/** The move `node` stands for in `pos`, or why there is none. */
function resolve(pos: Chess, ctx: Context, node: MoveNode, ply: number): NormalMove | string {
  let move: NormalMove | undefined;
  moversKnown = false;
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
  let from = -1;
  let count = 0;
  moverCount = 0;
  const candidates = reachingFrom(pos, role, to, found);
  for (let k = 0; k < candidates; k++) {
    const candidate = found[k] as number;
    if (role === 'pawn' && (candidate & 7) !== (to & 7) && !pos.board.occupied.has(to) && to !== pos.epSquare)
      continue;
    if (!isLegalFrom(pos, ctx, role, candidate, to)) continue;
    movers[moverCount++] = candidate;
    if (node.file >= 0 && (candidate & 7) !== node.file) continue;
    if (node.rank >= 0 && candidate >> 3 !== node.rank) continue;
    if (role === 'pawn' && node.file < 0 && (candidate & 7) !== (to & 7)) continue; // "d5" is no capture
    from = candidate;
    count++;
  }
  if (count > 1) return AMBIGUOUS;
  if (from === -1) return;
  moversKnown = true;
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
  for (const square of between(king, kingTo)) if (isAttacked(board, square, them, occupied)) return;
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
    if (moversKnown && moverCount === 1)
      return PIECE_SAN[(pieceSanIndex(role) * 2 + (capture ? 1 : 0)) * 64 + to] as string;
  }
  let san = sanLetter(role);
  if (role === 'pawn') {
    if (capture) san = FILES[from & 7] as string;
  } else if (moversKnown) {
    if (moverCount > 1) san += disambiguation(from);
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
      moverCount = 0;
      for (const other of others) movers[moverCount++] = other;
      if (moverCount > 0) san += disambiguation(from);
    }
  }
  if (capture) san += 'x';
  san += SQUARES[to];
  if (move.promotion) san += `=${sanLetter(move.promotion)}`;
  return san;
}

/**
 * File, rank or both of `from`, whichever tells it apart from the other squares of `movers` (as chessops
 * does: the file when another is on its rank or none on its file, the rank when another is on its file).
 */
function disambiguation(from: number): string {
  let sameRank = false;
  let sameFile = false;
  for (let k = 0; k < moverCount; k++) {
    const other = movers[k] as number;
    if (other === from) continue;
    if (other >> 3 === from >> 3) sameRank = true;
    if ((other & 7) === (from & 7)) sameFile = true;
  }
  const file = sameRank || !sameFile ? (FILES[from & 7] as string) : '';
  return sameFile ? file + String((from >> 3) + 1) : file;
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
  let ctx = contextOf(pos, lineCtx);
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
    playMove(pos, move, role);
    ctx = contextOf(pos, lineCtx);
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
