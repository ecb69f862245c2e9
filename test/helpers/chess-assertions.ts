// Shared assertions for the chess tests (not a test file itself).
import assert from 'node:assert/strict';
import {
  exportTags,
  type MoveNode,
  type NormalizedGame,
  normalizeGame,
  type ParsedGame,
  parseGame,
} from '../../src/chess/index.ts';

/** The movetext of an export PGN, without the final newline. */
export function movetextOf(pgn: string): string {
  return pgn.slice(pgn.indexOf('\n\n') + 2, -1);
}

/** Comments, NAGs and variation shape of a parsed game, without the moves' spelling. */
export function treeShape(game: ParsedGame): string {
  const line = (nodes: MoveNode[]): string =>
    nodes
      .map((n) => {
        let s = 'm';
        if (n.startComments) s = `${n.startComments.map((c) => `{${c}}`).join('')}${s}`;
        if (n.nags) s += n.nags.map((x) => `$${x}`).join('');
        if (n.comments) s += n.comments.map((c) => `{${c}}`).join('');
        if (n.variations) s += n.variations.map((v) => `(${line(v)})`).join('');
        return s;
      })
      .join(' ');
  return `${game.comments.map((c) => `{${c}}`).join('')}|${line(game.moves)}`;
}

/**
 * What the export promises for a game read from `source` (if given) and normalised to
 * `game`: a tag section, one blank line, movetext lines of at most 79 characters (only tag lines and a single unbreakable comment word, with
 * the words starting with '%' that follow it, may be longer) of which none starts with '%'
 * (an escape line), a final newline, and a round trip: normalizing `pgn` again gives the same
 * moves, FEN, tags (as exported), comments, NAGs and variations, and the same `pgn` (a fixed point).
 */
export function assertExportInvariants(pgn: string, game?: NormalizedGame, source?: string): void {
  assert.ok(pgn.endsWith('\n') && !pgn.endsWith('\n\n'), 'ends with exactly one newline');
  const blank = pgn.indexOf('\n\n');
  assert.ok(blank > 0, 'blank line after the tags');
  for (const line of pgn.slice(0, blank).split('\n'))
    assert.match(line, /^\[[A-Za-z0-9_+#=:-]+ "(?:[^"\\]|\\.)*"\]$/);
  for (const line of movetextOf(pgn).split('\n')) {
    assert.ok(line.length > 0, 'no blank line inside the movetext');
    assert.ok(!line.startsWith('%'), `escape line in the movetext: ${line.slice(0, 100)}`);
    if (line.length > 79)
      assert.ok(
        line.split(' ').every((word, i) => i === 0 || word.startsWith('%')),
        `line of ${line.length} characters: ${line.slice(0, 100)}`,
      );
  }
  const again = normalizeGame(pgn);
  assert.ok(again.ok, again.ok ? '' : `export does not read back: ${again.reason}`);
  assert.equal(again.game.pgn, pgn, 'export is a fixed point');
  if (!game) return;
  assert.equal(again.game.moves, game.moves);
  assert.equal(again.game.fen, game.fen);
  assert.equal(again.game.plies, game.plies);
  assert.equal(again.game.chess960, game.chess960);
  const result = again.game.tags.get('Result') ?? '';
  assert.deepEqual([...again.game.tags], exportTags(game.tags, result));
  if (source !== undefined && !game.warnings) {
    const a = parseGame(source);
    const b = parseGame(pgn);
    assert.ok(a.ok && b.ok);
    assert.equal(treeShape(b.game), treeShape(a.game), 'comments, NAGs and variations survive');
  }
}
