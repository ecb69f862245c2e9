// One game's text -> checked, normalised game (UCI main line, final FEN, export PGN).

import { makeFen } from 'chessops/fen';
import { exportResult, writeExportPgn } from './export-pgn.ts';
import { parseGame } from './parse.ts';
import { playLine } from './play.ts';
import type { NormalizeResult } from './types.ts';
import { startPosition } from './variants.ts';

/**
 * Parses and checks one game (text as cut by PgnSplitter).
 *
 * Decisions:
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
    fen: makeFen(pos.toSetup()),
    plies: nodes.length,
    pgn,
    chess960,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  return { ok: true, game: normalized };
}
