// One game's text -> checked, normalised game (UCI main line, final FEN, export PGN).

import { exportResult, writeExportPgn } from './export-pgn.ts';
import { fenOf } from './fen.ts';
import { parseGame } from './parse.ts';
import { playLine } from './play.ts';
import type { NormalizedGame, NormalizeResult } from './types.ts';
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
 *   of its output (docs/performance.md); that would lose a real game for a typo in an annotation. The
 *   export holds only legal moves, so it always reads back. (No corpus game is affected.)
 * - Comments keep their text with whitespace runs collapsed to one space (the export
 *   re-wraps lines); ';' comments become brace comments. Commands like [%clk] are kept.
 * - Warnings (the import reports them per game, like rejections): a variation cut, a tag
 *   repeated with another value (the last is kept), moves without a result terminator, a
 *   Result tag that holds no result or a terminator that differs from it.
 * - `tags` keeps every tag as written (source order, unescaped). The export fills missing
 *   Seven Tag Roster tags and takes the result from the Result tag, falling back to the
 *   terminator when the tag is missing or invalid (see exportResult).
 * - `fen` is chessops' FEN: en passant square only when a capture is legal, castling rights
 *   as KQkq where unambiguous (X-FEN), file letters otherwise; but the halfmove clock is not capped at 150
 *   (only at 9999, as the fullmove number).
 */
export function normalizeGame(raw: string, firstLine = 1): NormalizeResult {
  // The PGN standard allows no control characters but tab and newline, and PostgreSQL cannot store U+0000:
  // such a game is rejected here, on every store alike, rather than failing its whole import batch there.
  if (raw.includes('\u0000')) return { ok: false, reason: 'the game holds a NUL character (U+0000)' };
  const parsed = parseGame(raw, firstLine);
  if (!parsed.ok) return parsed;
  const game = parsed.game;
  if (game.tags.size === 0 && game.moves.length === 0) return { ok: false, reason: 'no game found' };

  const start = startPosition(game.tags);
  if (!start.ok) return start;
  const { pos, chess960 } = start.start;

  const warnings = game.warnings;
  const played = playLine(pos, game.moves, chess960, 0, warnings);
  if (played.error) return { ok: false, reason: played.error };
  // Kept, as a game ends at the next one's tags or the end of the input; but a missing terminator is how a
  // file cut off in the middle of a game looks.
  if (game.terminator === undefined && game.moves.length > 0)
    warnings.push('no result terminator after the moves: the game may be cut off');

  const nodes = game.moves;
  const moves = nodes.map((node) => node.uci).join(' ');
  const result = exportResult(game.tags, game.terminator);
  // The export has one result: a Result tag or a terminator that says otherwise is not kept.
  const tag = game.tags.get('Result');
  if (tag !== undefined && tag.trim() !== result)
    warnings.push(`Result tag "${tag}" is not a result: the game's is ${result}`);
  else if (game.terminator !== undefined && game.terminator !== result)
    warnings.push(
      `result terminator ${game.terminator} differs from the Result tag: the game's is ${result}`,
    );
  const pgn = writeExportPgn(game.tags, { comments: game.comments, moves: nodes }, result);
  const normalized: NormalizedGame = {
    tags: game.tags,
    moves,
    fen: fenOf(pos),
    plies: nodes.length,
    pgn,
    result,
    chess960,
  };
  if (warnings.length > 0) normalized.warnings = warnings;
  return { ok: true, game: normalized };
}
