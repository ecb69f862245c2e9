// One game's text -> checked, normalised game (UCI main line, final FEN, export PGN).

import type { Board } from 'chessops/board';
import type { Chess } from 'chessops/chess';
import { makeCastlingFen } from 'chessops/fen';
import type { Role } from 'chessops/types';
import { makeSquare } from 'chessops/util';
import { exportResult, writeExportPgn } from './export-pgn.ts';
import { parseGame } from './parse.ts';
import { playLine } from './play.ts';
import type { NormalizeResult } from './types.ts';
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
 *   of its output (measured); that would lose a real game for a typo in an annotation. The
 *   export holds only legal moves, so it always reads back. (No corpus game is affected.)
 * - Comments keep their text with whitespace runs collapsed to one space (the export
 *   re-wraps lines); ';' comments become brace comments. Commands like [%clk] are kept.
 * - `tags` keeps every tag as written (source order, unescaped). The export fills missing
 *   Seven Tag Roster tags and takes the result from the Result tag, falling back to the
 *   terminator when the tag is missing or invalid (see exportResult).
 * - `fen` is chessops' FEN: en passant square only when a capture is legal, castling rights
 *   as KQkq where unambiguous (X-FEN), file letters otherwise.
 */
export function normalizeGame(raw: string): NormalizeResult {
  // The PGN standard allows no control characters but tab and newline, and PostgreSQL cannot store U+0000:
  // such a game is rejected here, on every store alike, rather than failing its whole import batch there.
  if (raw.includes('\u0000')) return { ok: false, reason: 'the game holds a NUL character (U+0000)' };
  const parsed = parseGame(raw);
  if (!parsed.ok) return parsed;
  const game = parsed.game;
  if (game.tags.size === 0 && game.moves.length === 0) return { ok: false, reason: 'no game found' };

  const start = startPosition(game.tags);
  if (!start.ok) return start;
  const { pos, chess960 } = start.start;

  const warnings: string[] = [];
  const played = playLine(pos, game.moves, chess960, 0, warnings);
  if (played.error) return { ok: false, reason: played.error };

  const nodes = game.moves;
  const moves = nodes.map((node) => node.uci).join(' ');
  const result = exportResult(game.tags, game.terminator);
  const pgn = writeExportPgn(game.tags, { comments: game.comments, moves: nodes }, result);
  const normalized = {
    tags: game.tags,
    moves,
    fen: fenOf(pos),
    plies: nodes.length,
    pgn,
    chess960,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  return { ok: true, game: normalized };
}

const WHITE_PIECES: Record<Role, string> = {
  pawn: 'P',
  knight: 'N',
  bishop: 'B',
  rook: 'R',
  queen: 'Q',
  king: 'K',
};
const BLACK_PIECES: Record<Role, string> = {
  pawn: 'p',
  knight: 'n',
  bishop: 'b',
  rook: 'r',
  queen: 'q',
  king: 'k',
};

/** The board part of a FEN, as chessops' makeBoardFen writes it without a piece object per square. */
function boardFen(board: Board): string {
  let fen = '';
  for (let rank = 7; rank >= 0; rank--) {
    let empty = 0;
    for (let square = rank * 8; square < rank * 8 + 8; square++) {
      const color = board.getColor(square);
      if (color === undefined) {
        empty++;
        continue;
      }
      if (empty > 0) fen += empty;
      empty = 0;
      fen += (color === 'white' ? WHITE_PIECES : BLACK_PIECES)[board.getRole(square) as Role];
    }
    if (empty > 0) fen += empty;
    if (rank > 0) fen += '/';
  }
  return fen;
}

/** chessops' makeFen(pos.toSetup()) for standard and Chess960 positions (no pockets, no check counts). */
function fenOf(pos: Chess): string {
  const setup = pos.toSetup();
  const ep = setup.epSquare === undefined ? '-' : makeSquare(setup.epSquare);
  const castling = makeCastlingFen(setup.board, setup.castlingRights);
  const halfmoves = Math.max(0, Math.min(setup.halfmoves, 9999));
  const fullmoves = Math.max(1, Math.min(setup.fullmoves, 9999));
  return `${boardFen(setup.board)} ${setup.turn[0]} ${castling} ${ep} ${halfmoves} ${fullmoves}`;
}
