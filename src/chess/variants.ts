// Start position of a game from its Variant, SetUp and FEN tags.
//
// Only standard chess and Chess960 are supported. chessops plays both with the same rules
// (castling is king-takes-rook internally, rooks taken from the FEN's castling rights), so
// the only difference for us is how castling is written in UCI: e1g1 in standard games,
// e1h1 (king takes rook) in Chess960 games.

import { Chess } from 'chessops/chess';
import { parseFen } from 'chessops/fen';
import { clip } from './parse.ts';

export interface StartPosition {
  pos: Chess;
  chess960: boolean;
}

export type StartResult = { ok: true; start: StartPosition } | { ok: false; reason: string };

const STANDARD_NAMES = new Set([
  '',
  'standard',
  'chess',
  'normal',
  'classical',
  'from position',
  'fromposition',
]);

const CHESS960_NAMES = new Set([
  'chess960',
  'chess 960',
  'chess-960',
  '960',
  'fischerandom',
  'fischerrandom',
  'fischer random',
  'fischer-random',
  'frc',
  'chess960 (frc)',
  'freestyle',
  'freestyle chess',
  'double fischer random',
  'dfrc',
]);

/** Parses a Variant tag value: 'standard', 'chess960', or undefined if unsupported. */
export function variantOf(tag: string | undefined): 'standard' | 'chess960' | undefined {
  const name = (tag ?? '').trim().toLowerCase();
  if (STANDARD_NAMES.has(name)) return 'standard';
  if (CHESS960_NAMES.has(name)) return 'chess960';
  return;
}

/**
 * A FEN as a reason quotes it: whole up to 100 characters (a real one is under 90), clipped after, so that a
 * broken tag of a megabyte does not make a reason of a megabyte.
 */
const shownFen = (fen: string) => clip(fen, 100);

export function startPosition(tags: Map<string, string>): StartResult {
  const variantTag = tags.get('Variant');
  const variant = variantOf(variantTag);
  if (!variant) return { ok: false, reason: `unsupported variant ${clip(variantTag ?? '')}` };
  const fen = tags.get('FEN')?.trim();
  if (fen === undefined || fen === '') {
    if (tags.get('SetUp')?.trim() === '1')
      return { ok: false, reason: 'invalid FEN: SetUp "1" without a FEN tag' };
    return { ok: true, start: { pos: Chess.default(), chess960: variant === 'chess960' } };
  }
  const setup = parseFen(fen);
  if (setup.isErr)
    return { ok: false, reason: `invalid FEN: ${fenErrorText(setup.error.message)} in "${shownFen(fen)}"` };
  if (setup.value.pockets)
    return { ok: false, reason: `invalid FEN: pockets (Crazyhouse) in "${shownFen(fen)}"` };
  if (setup.value.remainingChecks)
    return { ok: false, reason: `invalid FEN: remaining checks (Three-check) in "${shownFen(fen)}"` };
  // chessops takes any en passant square (and keeps it only where a capture is legal): one that no pawn
  // can have just passed, for the side to move, means a broken FEN.
  const { epSquare, turn } = setup.value;
  if (epSquare !== undefined && epSquare >> 3 !== (turn === 'white' ? 5 : 2))
    return {
      ok: false,
      reason: `invalid FEN: en passant square off rank ${turn === 'white' ? 6 : 3}, where the pawn passed, in "${shownFen(fen)}"`,
    };
  const pos = Chess.fromSetup(setup.value);
  if (pos.isErr)
    return { ok: false, reason: `invalid FEN: ${fenErrorText(pos.error.message)} in "${shownFen(fen)}"` };
  return {
    ok: true,
    start: { pos: pos.value, chess960: variant === 'chess960' || hasChess960Castling(pos.value) },
  };
}

/**
 * Whether the position's castling rights need Chess960 castling: a king off the e-file
 * or a castling rook off the a/h corner (Shredder-FEN "HAha", or X-FEN "KQkq" in a
 * Chess960 start position).
 */
function hasChess960Castling(pos: Chess): boolean {
  for (const color of ['white', 'black'] as const) {
    const rooks = pos.castles.rook[color];
    if (rooks.a === undefined && rooks.h === undefined) continue;
    const home = color === 'white' ? 0 : 56;
    if (pos.board.kingOf(color) !== home + 4) return true;
    if (rooks.a !== undefined && rooks.a !== home) return true;
    if (rooks.h !== undefined && rooks.h !== home + 7) return true;
  }
  return false;
}

const FEN_ERRORS: Record<string, string> = {
  ERR_FEN: 'malformed FEN',
  ERR_BOARD: 'bad board',
  ERR_POCKETS: 'bad pockets',
  ERR_TURN: 'bad side to move',
  ERR_CASTLING: 'bad castling rights',
  ERR_EP_SQUARE: 'bad en passant square',
  ERR_REMAINING_CHECKS: 'bad remaining checks',
  ERR_HALFMOVES: 'bad halfmove clock',
  ERR_FULLMOVES: 'bad fullmove number',
  ERR_EMPTY: 'empty board',
  ERR_OPPOSITE_CHECK: 'side not to move is in check',
  ERR_PAWNS_ON_BACKRANK: 'pawns on the back rank',
  ERR_KINGS: 'not exactly one king per side',
  ERR_VARIANT: 'variant rules violated',
};

function fenErrorText(code: string): string {
  return FEN_ERRORS[code] ?? code;
}
