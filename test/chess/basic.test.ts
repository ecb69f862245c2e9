import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeGame, splitPgn } from '../../src/chess/index.ts';

const RUY = `[Event "Casual"]
[Site "?"]
[White "A"]
[Black "B"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. O-O Nf6 *
`;

test('a plain game is split, played and exported', () => {
  const games = splitPgn(RUY + RUY);
  assert.equal(games.length, 2);
  assert.deepEqual(
    games.map((g) => [g.index, g.line]),
    [
      [1, 1],
      [2, 8],
    ],
  );
  const r = normalizeGame(games[0]?.text ?? '');
  assert.ok(r.ok);
  // Expected values from pgn-extract -Wuci -F.
  assert.equal(r.game.moves, 'e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 e1g1 g8f6');
  assert.equal(r.game.fen, 'r1bqkb1r/1ppp1ppp/p1n2n2/1B2p3/4P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 2 5');
  assert.equal(r.game.plies, 8);
  assert.equal(
    r.game.pgn,
    '[Event "Casual"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "?"]\n[White "A"]\n[Black "B"]\n[Result "*"]\n\n' +
      '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. O-O Nf6 *\n',
  );
});

test('an illegal move rejects the game with a reason', () => {
  const r = normalizeGame('[Event "x"]\n\n1. e4 e5 2. Ke3 *\n');
  assert.deepEqual(r, { ok: false, reason: 'illegal move 2.Ke3 (ply 3, line 3)' });
});

test('a NUL character rejects the game, whatever else it holds', () => {
  const r = normalizeGame('[Event "x\u0000"]\n\n1. e4 e5 *\n');
  assert.deepEqual(r, { ok: false, reason: 'the game holds a NUL character (U+0000)' });
});
