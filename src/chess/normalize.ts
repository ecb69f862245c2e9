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
 * - Variation moves are checked too. A variation is cut at its first bad move (null moves
 *   in analysis lines are common) and the game kept, with a warning: the main line and the
 *   result are what users import, and pgn-extract's choice of rejecting the whole game would
 *   lose real games for a typo in an annotation. The export then holds only legal moves.
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

  const played = playLine(pos, game.moves, chess960, 0);
  if (played.error) return { ok: false, reason: played.error };

  const nodes = played.nodes;
  let moves = '';
  for (let i = 0; i < nodes.length; i++) moves += i === 0 ? (nodes[i]?.uci as string) : ` ${nodes[i]?.uci}`;
  const result = exportResult(game.tags, game.terminator);
  const pgn = writeExportPgn(game.tags, { comments: game.comments, moves: nodes }, result);
  const normalized = {
    tags: game.tags,
    moves,
    fen: makeFen(pos.toSetup()),
    plies: nodes.length,
    pgn,
    chess960,
    ...(played.warnings.length > 0 ? { warnings: played.warnings } : {}),
  };
  return { ok: true, game: normalized };
}
