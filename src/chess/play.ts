// Plays parsed moves on a position with full legality checks and produces the checked
// move tree (canonical SAN, UCI) that the export writer prints.

import { type Chess, castlingSide } from 'chessops/chess';
import { makeSanAndPlay } from 'chessops/san';
import { SquareSet } from 'chessops/squareSet';
import type { Move, NormalMove, Role } from 'chessops/types';
import { charToRole, kingCastlesTo, makeSquare, parseSquare, squareFile, squareRank } from 'chessops/util';
import type { MoveNode } from './export-pgn.ts';
import type { ParsedMove } from './parse.ts';

export type PlayResult = { ok: true; move: NormalMove; uci: string } | { ok: false; reason: string };

/** "12." for a white move, "12..." for a black move. */
export function moveLabel(pos: Chess): string {
  return pos.turn === 'white' ? `${pos.fullmoves}.` : `${pos.fullmoves}...`;
}

/** Resolves one parsed move in `pos` (not played). `ply` is only used in messages. */
export function resolveMove(pos: Chess, parsed: ParsedMove, chess960: boolean, ply: number): PlayResult {
  const where = `${moveLabel(pos)}${parsed.token} (ply ${ply})`;
  let move: NormalMove | undefined;
  switch (parsed.kind) {
    case 'null':
      return { ok: false, reason: `null move at ${where}` };
    case 'drop':
      return { ok: false, reason: `piece drop ${where}: drops exist only in Crazyhouse` };
    case 'coord':
      move = resolveCoordinates(pos, parsed.token);
      break;
    default: {
      move = resolveSan(pos, parsed.token);
      if (!move && parsed.kind === 'san' && isAmbiguous(pos, parsed.token)) {
        return { ok: false, reason: `ambiguous move ${where}` };
      }
    }
  }
  if (!move) return { ok: false, reason: `illegal move ${where}` };
  return { ok: true, move, uci: makeUci(pos, move, chess960) };
}

/**
 * UCI of a legal move. chessops stores castling as king-takes-rook; that is the UCI of
 * Chess960 games, standard games write the king's two-square move.
 */
function makeUci(pos: Chess, move: NormalMove, chess960: boolean): string {
  let to = move.to;
  if (!chess960 && pos.board.king.has(move.from) && pos.board[pos.turn].has(move.to)) {
    to = kingCastlesTo(pos.turn, move.to > move.from ? 'h' : 'a');
  }
  const promo = move.promotion ? ROLE_CHAR[move.promotion] : '';
  return makeSquare(move.from) + makeSquare(to) + promo;
}

const ROLE_CHAR: Record<Role, string> = {
  pawn: 'p',
  knight: 'n',
  bishop: 'b',
  rook: 'r',
  queen: 'q',
  king: 'k',
};

const SAN_PARTS = /^([NBRQK])?([a-h])?([1-8])?x?([a-h][1-8])(?:=([NBRQK]))?$/;

function resolveSan(pos: Chess, token: string): NormalMove | undefined {
  if (token === 'O-O' || token === 'O-O-O') {
    const ctx = pos.ctx();
    const rook = pos.castles.rook[pos.turn][token === 'O-O' ? 'h' : 'a'];
    if (ctx.king === undefined || rook === undefined || !pos.dests(ctx.king, ctx).has(rook)) return;
    return { from: ctx.king, to: rook };
  }
  const m = SAN_PARTS.exec(token);
  if (!m) return;
  const role: Role = m[1] ? (charToRole(m[1]) as Role) : 'pawn';
  const to = parseSquare(m[4] as string) as number;
  const promotion = m[5] ? charToRole(m[5]) : undefined;
  if (!!promotion !== (role === 'pawn' && SquareSet.backranks().has(to))) return;
  if (promotion === 'king') return;
  let from: number | undefined;
  const ctx = pos.ctx();
  for (const candidate of candidates(pos, role, m)) {
    if (pos.dests(candidate, ctx).has(to)) {
      if (from !== undefined) return; // ambiguous
      from = candidate;
    }
  }
  if (from === undefined) return;
  return { from, to, promotion };
}

function candidates(pos: Chess, role: Role, m: RegExpExecArray): SquareSet {
  let set = pos.board.pieces(pos.turn, role);
  const to = parseSquare(m[4] as string) as number;
  if (m[2]) set = set.intersect(SquareSet.fromFile(m[2].charCodeAt(0) - 97));
  else if (role === 'pawn') set = set.intersect(SquareSet.fromFile(squareFile(to)));
  if (m[3]) set = set.intersect(SquareSet.fromRank(m[3].charCodeAt(0) - 49));
  return set;
}

function isAmbiguous(pos: Chess, token: string): boolean {
  const m = SAN_PARTS.exec(token);
  if (!m) return false;
  const role: Role = m[1] ? (charToRole(m[1]) as Role) : 'pawn';
  const to = parseSquare(m[4] as string) as number;
  const ctx = pos.ctx();
  let n = 0;
  for (const candidate of candidates(pos, role, m)) if (pos.dests(candidate, ctx).has(to)) n++;
  return n > 1;
}

/**
 * Long algebraic / UCI input ("e2e4", "d7d8q", "e1g1", "e1h1"). A king moving onto its own
 * rook is king-takes-rook castling; a king moving to g/c on its back rank where a plain king
 * move cannot go is two-square castling. Both are accepted in standard and Chess960 games.
 */
function resolveCoordinates(pos: Chess, token: string): NormalMove | undefined {
  const from = parseSquare(token.slice(0, 2)) as number;
  const to = parseSquare(token.slice(2, 4)) as number;
  const promotion = token.length > 4 ? charToRole(token.charAt(4)) : undefined;
  const piece = pos.board.get(from);
  if (!piece || piece.color !== pos.turn) return;
  const ctx = pos.ctx();
  const dests = pos.dests(from, ctx);
  if (piece.role === 'king' && !dests.has(to)) {
    if (squareRank(from) !== squareRank(to) || Math.abs(to - from) < 2) return;
    const side = castlingSide(pos, { from, to });
    if (!side || kingCastlesTo(pos.turn, side) !== to) return;
    const rook = pos.castles.rook[pos.turn][side];
    if (rook === undefined || !dests.has(rook)) return;
    return { from, to: rook };
  }
  const move: NormalMove = { from, to, promotion };
  return pos.isLegal(move, ctx) ? move : undefined;
}

export interface LineResult {
  nodes: MoveNode[];
  /** Why the line stops early (an illegal move); undefined when every move was played. */
  error?: string;
  /** Problems found in variations (each cut at its first illegal move). */
  warnings: string[];
}

/**
 * Plays `line` from `pos` (mutated), with its variations on copies of the position. `ply`
 * is the number of plies before the line starts. The main line stops at its first illegal
 * move (the caller rejects the game); a variation is cut there and a warning recorded.
 */
export function playLine(
  pos: Chess,
  line: ParsedMove[],
  chess960: boolean,
  ply: number,
  warnings: string[] = [],
): LineResult {
  const nodes: MoveNode[] = [];
  for (const parsed of line) {
    ply++;
    let variations: MoveNode[][] | undefined;
    if (parsed.variations) {
      for (const variation of parsed.variations) {
        const played = playLine(pos.clone(), variation, chess960, ply - 1, warnings);
        if (played.error) warnings.push(`variation cut: ${played.error}`);
        if (played.nodes.length > 0) {
          if (variations) variations.push(played.nodes);
          else variations = [played.nodes];
        }
      }
    }
    const resolved = resolveMove(pos, parsed, chess960, ply);
    if (!resolved.ok) return { nodes, error: resolved.reason, warnings };
    const moveNumber = pos.fullmoves;
    const white = pos.turn === 'white';
    const uci = resolved.uci;
    const san = makeSanAndPlay(pos, resolved.move as Move);
    const node: MoveNode = { san, uci, moveNumber, white };
    if (parsed.nags) node.nags = parsed.nags;
    if (parsed.comments) node.comments = parsed.comments;
    if (parsed.startComments) node.startComments = parsed.startComments;
    if (variations) node.variations = variations;
    nodes.push(node);
  }
  return { nodes, warnings };
}
