// Independent check of UCI main lines and final positions: every game that pgn-extract
// (`pgn-extract -Wuci -F`) accepts in a corpus file must be accepted by us with the same
// moves and the same final position. Skipped when pgn-extract or the corpus is missing.
//
// Known notational differences, normalised before comparing:
// - pgn-extract writes promotions in upper case (e7e8Q), UCI wants e7e8q;
// - pgn-extract writes an en passant square after every double step, chessops only when a
//   capture is possible: the en passant field is not compared;
// - in Chess960 games pgn-extract writes castling as king-from + king-to (and is not
//   consistent about it), we write king takes rook: only the final position is compared.
// Games pgn-extract does not print in this mode (no moves) are not compared; files of
// unsupported variants are left out (pgn-extract "accepts" fragments of crazyhouse games).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { normalizeGame, splitPgn } from '../../src/chess/index.ts';
import { CORPUS, NO_CORPUS } from '../helpers/corpus.ts';

const MAX_BYTES = 5_000_000;
const LEFT_OUT = /zh|crazyhouse|antichess/;

function findPgnExtract(): string | undefined {
  for (const candidate of ['pgn-extract', '/usr/games/pgn-extract']) {
    try {
      execFileSync(candidate, ['-h'], { stdio: 'ignore' });
      return candidate;
    } catch (err) {
      // pgn-extract -h exits non-zero on some versions: it exists if it could be spawned.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return candidate;
    }
  }
  return;
}

const pgnExtract = findPgnExtract();
const files = existsSync(CORPUS)
  ? ['large', 'annotated', 'chess960', 'awkward', 'edge'].flatMap((dir) =>
      readdirSync(join(CORPUS, dir))
        .filter(
          (f) => f.endsWith('.pgn') && !LEFT_OUT.test(f) && statSync(join(CORPUS, dir, f)).size <= MAX_BYTES,
        )
        .map((f) => join(dir, f)),
    )
  : [];
const skip =
  pgnExtract === undefined
    ? 'pgn-extract not installed (apt-get install pgn-extract)'
    : files.length === 0
      ? NO_CORPUS
      : false;

/** "moves|position" keys; the FEN without en passant square and move counters. */
function key(moves: string, fen: string, chess960: boolean): string {
  const position = fen.split(' ').slice(0, 3).join(' ');
  return chess960 ? `960 ${moves.split(' ').length}|${position}` : `${moves}|${position}`;
}

test('every game pgn-extract accepts, we accept with the same UCI moves and final position', { skip }, () => {
  let compared = 0;
  for (const file of files) {
    const path = join(CORPUS, file);
    const bytes = readFileSync(path);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = new TextDecoder('latin1').decode(bytes);
    }
    const games = splitPgn(text)
      .map((raw) => normalizeGame(raw.text))
      .flatMap((r) => (r.ok && r.game.plies > 0 ? [r.game] : []));
    // Files of at most 5 MB are all-Chess960 or all-standard (the mixed TCEC file is larger).
    const chess960 = games.some((g) => g.chess960);
    const ours = new Map<string, number>();
    for (const g of games) {
      const k = key(g.moves, g.fen, chess960);
      ours.set(k, (ours.get(k) ?? 0) + 1);
    }
    const out = execFileSync(
      pgnExtract as string,
      ['-Wuci', '-F', '--notags', '-w100000', '--nocomments', '--novars', '-s', path],
      { encoding: 'latin1', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const theirs: [string, string][] = [];
    for (const line of out.split('\n')) {
      const m = /^(.*?)\s*\{ "([^"]*)" \}/.exec(line);
      if (m && (m[1] as string).trim() !== '') theirs.push([(m[1] as string).trim(), m[2] as string]);
    }
    const missing: string[] = [];
    for (const [uci, fen] of theirs) {
      const moves = uci.replace(/([a-h][1-8][a-h][1-8])([NBRQ])/g, (_, a, p) => a + p.toLowerCase());
      const k = key(moves, fen, chess960);
      const n = ours.get(k) ?? 0;
      if (n === 0) missing.push(k.slice(-120));
      else ours.set(k, n - 1);
      compared++;
    }
    assert.deepEqual(missing, [], `${file}: games pgn-extract accepts that we reject or read differently`);
  }
  assert.ok(compared > 10_000, `only ${compared} games compared`);
});
