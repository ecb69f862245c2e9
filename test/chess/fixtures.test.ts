// Hand-written fixtures, one per case. Expected UCI lines and FENs were checked with
// pgn-extract 19.04 (`pgn-extract -Wuci -F`), except where a comment says otherwise.
// pgn-extract writes an en passant square after every double pawn push; chessops (and so
// we) only when an en passant capture is legal, so those FENs show '-'.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseFen } from 'chessops/fen';
import { type NormalizedGame, normalizeGame, splitPgn } from '../../src/chess/index.ts';
import { assertExportInvariants, movetextOf } from '../helpers/chess-assertions.ts';

function fixture(name: string, encoding: 'utf-8' | 'latin1' = 'utf-8'): string {
  const bytes = readFileSync(new URL(`../fixtures/chess/${name}`, import.meta.url));
  return new TextDecoder(encoding).decode(bytes);
}

/** Splits a fixture and normalizes every game; asserts each one is accepted. */
function games(name: string, encoding: 'utf-8' | 'latin1' = 'utf-8'): NormalizedGame[] {
  return splitPgn(fixture(name, encoding)).map((raw) => {
    const r = normalizeGame(raw.text);
    assert.ok(r.ok, `${name} game ${raw.index}: ${r.ok ? '' : r.reason}`);
    return r.game;
  });
}

function only(name: string, encoding: 'utf-8' | 'latin1' = 'utf-8'): NormalizedGame {
  const all = games(name, encoding);
  assert.equal(all.length, 1);
  return all[0] as NormalizedGame;
}

const movetext = (g: NormalizedGame | undefined) => movetextOf(g?.pgn ?? '');

function reasons(name: string): string[] {
  return splitPgn(fixture(name)).map((raw) => {
    const r = normalizeGame(raw.text);
    return r.ok ? 'ok' : r.reason;
  });
}

const MORPHY_UCI =
  'e2e4 e7e5 g1f3 d7d6 d2d4 c8g4 d4e5 g4f3 d1f3 d6e5 f1c4 g8f6 f3b3 d8e7 b1c3 c7c6 c1g5 b7b5 c3b5 c6b5 ' +
  'c4b5 b8d7 e1c1 a8d8 d1d7 d8d7 h1d1 e7e6 b5d7 f6d7 b3b8 d7b8 d1d8';
const MORPHY_FEN = '1n1Rkb1r/p4ppp/4q3/4p1B1/4P3/8/PPP2PPP/2K5 b k - 1 17';

test('plain game: UCI main line, final FEN, plies, tags in source order', () => {
  const g = only('plain.pgn');
  assert.equal(g.moves, MORPHY_UCI);
  assert.equal(g.fen, MORPHY_FEN);
  assert.equal(g.plies, 33);
  assert.equal(g.chess960, false);
  assert.deepEqual([...g.tags.keys()], ['Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result']);
  assert.equal(g.tags.get('Black'), 'Duke Karl / Count Isouard');
});

test('CRLF line endings give the same game as LF', () => {
  const lf = only('plain.pgn');
  const crlf = only('crlf.pgn');
  assert.equal(crlf.moves, lf.moves);
  assert.equal(crlf.fen, lf.fen);
  assert.deepEqual(crlf.tags, lf.tags);
  assert.equal(crlf.pgn, lf.pgn);
  assert.ok(!crlf.pgn.includes('\r'));
});

test('a UTF-8 BOM is not part of the game', () => {
  const raw = splitPgn(fixture('bom.pgn'));
  assert.equal(raw.length, 1);
  assert.ok(raw[0]?.text.startsWith('[Event "Paris Opera"]'));
  const g = only('bom.pgn');
  assert.deepEqual([...g.tags.keys()][0], 'Event');
  assert.equal(g.pgn, only('plain.pgn').pgn);
  // Also when the BOM is left in by the caller.
  const r = normalizeGame(`\uFEFF${fixture('plain.pgn')}`);
  assert.ok(r.ok);
  assert.equal(r.game.moves, MORPHY_UCI);
});

test('Latin-1 names survive once decoded', () => {
  const g = only('latin1.pgn', 'latin1');
  assert.equal(g.tags.get('White'), 'György, László');
  assert.equal(g.tags.get('Black'), 'Müller, Jürgen');
  assert.equal(g.moves, 'd2d4 d7d5 c2c4 c7c6');
  assert.equal(g.fen, 'rnbqkbnr/pp2pppp/2p5/3p4/2PP4/8/PP2PPPP/RNBQKBNR w KQkq - 0 3');
  assert.ok(g.pgn.includes('[White "György, László"]'));
});

test('escape lines are ignored, even a commented-out tag or move', () => {
  const g = only('escape.pgn');
  assert.equal(g.tags.get('Result'), '*');
  assert.equal(g.moves, 'e2e4 e7e5 g1f3');
  assert.equal(g.fen, 'rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2');
});

test('the halfmove clock goes on past 150: the FEN is not capped where the 75-move rule would end a game', () => {
  // chessops' toSetup caps it at 150, and so did we: 6 master games of the pgnmentor collection ended with
  // 154 to 167 half-moves since the last capture or pawn move (found by reading our export with python-chess).
  const g = only('halfmove-clock.pgn');
  assert.equal(g.moves, 'd7d2 f3g4 d2d7 g4f3 d7d2 f3g4 d2d7');
  assert.equal(g.fen, '8/3R4/5K1k/7p/6bP/8/8/8 b - - 153 149');
});

test('the halfmove clock and the fullmove number stop at 9999 in the FEN, the most that chessops reads', () => {
  const r = normalizeGame(
    '[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/8/4K1N1 w - - 9998 9999"]\n\n1. Nf3 Kd7 2. Ng5 *\n',
  );
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.equal(r.game.fen, '8/3k4/8/6N1/8/8/8/4K3 b - - 9999 9999');
  assert.ok(parseFen(r.game.fen).isOk);
});

test('export: a comment never puts a word starting with "%" in a line\'s first column', () => {
  // A '%' there starts an escape line, which a reader skips with the rest of the comment and its '}'
  // (python-chess and pgn-extract keep it inside a comment; the standard makes no such exception). Before,
  // each comment below was wrapped right before its '%' word.
  const [afterMove, ownLines, closing] = games('percent-wrap.pgn');
  assert.equal(
    movetext(afterMove),
    '1. e4 {The engine, asked about this move after a very long think,\nanswered %eval 0.31} 1... e5 *',
  );
  assert.equal(
    movetext(ownLines),
    '1. e4 e5 2. Nf3 {Quite often such a long comment takes lines of its own, and\n' +
      'one of them would have begun with a percent sign here, where the engine\n' +
      'says %eval +0.35 and the book agrees that this is the main line} 2... Nc6 *',
  );
  assert.equal(
    movetext(closing),
    '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 (3... Nf6 4. O-O Nxe4 5. d4 Nd6 6. Bxc6 dxc6\n' +
      '7. dxe5 {the old books called this bad, but in the databases white scores\n55 %}) 4. Ba4 *',
  );
  for (const g of [afterMove, ownLines, closing]) {
    assert.ok(g);
    assertExportInvariants(g.pgn, g);
  }
});

test('zero castling 0-0 / 0-0-0 is read as O-O / O-O-O', () => {
  const g = only('zero-castling.pgn');
  assert.equal(
    g.moves,
    'e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 e1g1 g8f6 d2d4 c5d4 f3d4 c6d4 c1g5 d7d6 b1c3 c8e6 d1d3 d8d7 a1d1 e8c8',
  );
  assert.equal(g.fen, '2kr3r/pppq1ppp/3pbn2/4p1B1/2BnP3/2NQ4/PPP2PPP/3R1RK1 w - - 6 11');
  assert.ok(g.pgn.includes('4. O-O Nf6'));
  assert.ok(g.pgn.includes('10. Rad1 O-O-O'));
});

test('castling on both wings for both colours, king two squares in UCI', () => {
  const [long, short] = games('castling-both.pgn');
  assert.equal(long?.moves, 'd2d4 d7d5 b1c3 b8c6 c1f4 c8f5 d1d2 d8d7 e1c1 e8c8 e2e3 e7e6');
  assert.equal(long?.fen, '2kr1bnr/pppq1ppp/2n1p3/3p1b2/3P1B2/2N1P3/PPPQ1PPP/2KR1BNR w - - 0 7');
  assert.equal(short?.moves, 'e2e4 e7e5 g1f3 g8f6 f1e2 f8e7 e1g1 e8g8');
  assert.equal(short?.fen, 'rnbq1rk1/ppppbppp/5n2/4p3/4P3/5N2/PPPPBPPP/RNBQ1RK1 w - - 6 5');
});

test('promotion and underpromotion, with and without capture, lower-case in UCI', () => {
  const g = only('promotion.pgn');
  assert.equal(g.moves, 'a7b8n f2f1q d1c2 h2g1r c7c8q e8e7');
  assert.equal(g.fen, '1NQ5/4k3/8/8/8/8/2K5/5qr1 w - - 1 43');
  assert.ok(g.pgn.includes('40. axb8=N f1=Q+ 41. Kc2 hxg1=R 42. c8=Q+ Ke7 *'));
});

test('en passant captures by both colours', () => {
  const g = only('en-passant.pgn');
  assert.equal(g.moves, 'e2e4 g8f6 e4e5 d7d5 e5d6 e7e5 d6c7 e5e4 d2d4 e4d3');
  assert.equal(g.fen, 'rnbqkb1r/ppP2ppp/5n2/8/8/3p4/PPP2PPP/RNBQKBNR w KQkq - 0 6');
});

test('set-up position with black to move starts at the FEN move number with "N..."', () => {
  const g = only('setup-black.pgn');
  assert.equal(g.moves, 'f6g4 e1g1 g4f2 f1f2 c5f2 g1f2');
  assert.equal(g.fen, 'r1bqk2r/pppp1ppp/2n5/4p3/2B1P3/3P1N2/PPP2KPP/RNBQ4 b kq - 0 7');
  assert.ok(g.pgn.endsWith('\n\n4... Ng4 5. O-O Nxf2 6. Rxf2 Bxf2+ 7. Kxf2 0-1\n'), g.pgn);
});

test('Chess960: O-O-O with king b1 and rook a1 is b1a1 (king takes rook), SAN stays O-O-O', () => {
  const g = only('chess960.pgn');
  assert.equal(g.chess960, true);
  assert.equal(g.moves, 'c1b3 c8b6 d1c3 d8c6 b1a1 b8a8 g2g3 g7g6 f1g2 f8g7');
  // Castling moves the king, so both sides lose all castling rights.
  assert.equal(g.fen, '2krb1qr/ppppppbp/1nn3p1/8/8/1NN3P1/PPPPPPBP/2KRB1QR w - - 2 6');
  assert.ok(g.pgn.includes('3. O-O-O O-O-O'));
});

test('Chess960 is also recognised from Shredder-FEN castling rights without a Variant tag', () => {
  const r = normalizeGame(
    '[FEN "rknnbbqr/pppppppp/8/8/8/8/PPPPPPPP/RKNNBBQR w HAha - 0 1"]\n[SetUp "1"]\n\n' +
      '1. Nb3 Nb6 2. Nc3 Nc6 3. O-O-O *\n',
  );
  assert.ok(r.ok);
  assert.equal(r.game.chess960, true);
  assert.equal(r.game.moves.split(' ').at(-1), 'b1a1');
});

test('a game without moves is accepted with the start position', () => {
  const g = only('no-moves.pgn');
  assert.equal(g.moves, '');
  assert.equal(g.plies, 0);
  assert.equal(g.fen, 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1');
  assert.ok(g.pgn.endsWith('[Result "1-0"]\n\n1-0\n'));
});

test('comments, NAGs, suffix annotations and nested variations are kept in the export', () => {
  const g = only('annotated.pgn');
  // Main line checked with pgn-extract after removing the ';' comment it does not read.
  assert.equal(g.moves, 'e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1');
  assert.equal(g.fen, 'r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 3 5');
  assert.equal(g.tags.get('Annotator'), 'Someone "quoted" \\ here');
  assert.equal(
    g.pgn,
    [
      '[Event "Annotated"]',
      '[Site "?"]',
      '[Date "????.??.??"]',
      '[Round "?"]',
      '[White "?"]',
      '[Black "?"]',
      '[Result "1-0"]',
      '[Annotator "Someone \\"quoted\\" \\\\ here"]',
      '',
      '{Game comment before the first move.} 1. e4 $1 1... e5 2. Nf3 Nc6 (2... d6',
      '{Philidor} 3. d4 (3. Bc4 Be7 (3... Bg4 $6 4. Nc3) 4. d4) 3... exd4) 3. Bb5 $1',
      '3... a6 {Morphy} 4. Ba4 {[%clk 0:05:00]} 4... Nf6 $4 5. O-O $14 1-0',
      '',
    ].join('\n'),
  );
});

test('an illegal move rejects the game, naming move and ply', () => {
  assert.deepEqual(reasons('illegal.pgn'), ['illegal move 5.Qxe5 (ply 9, line 4)']);
});

test('a tag pair broken over lines at its blanks is one tag pair, and the lines after it are counted', () => {
  // '[Result\n  "*"]' is one tag pair to the parser. The splitter read its second line as movetext, so a tag
  // line or a blank line and "1." after it started another game (tags only, then moves only); and the
  // parser did not count its line breaks, so every line number after it was too small. Found by fuzz.test.ts.
  const raws = splitPgn(fixture('tag-across-lines.pgn'));
  const outcomes = raws.map((raw) => {
    const r = normalizeGame(raw.text, raw.line);
    return r.ok ? r.game.warnings : r.reason;
  });
  assert.deepEqual(outcomes, [
    'illegal move 5.Qxe5 (ply 9, line 6)',
    [
      'tag White repeated at line 10: "First" replaced by "Second"',
      'variation cut: illegal move 2.Bxh8 (ply 3, line 15)',
    ],
  ]);
  const kept = normalizeGame(raws[1]?.text ?? '');
  assert.ok(kept.ok);
  assert.deepEqual(
    [...kept.game.tags],
    [
      ['Event', 'Kept, with warnings'],
      ['White', 'Second'],
      ['Site', 'Later'],
    ],
  );
  assert.equal(kept.game.moves, 'd2d4 d7d5 c2c4');
});

test('a reason or warning that quotes the first 40 characters does not cut an emoji in two', () => {
  // A character beyond U+FFFF is two UTF-16 units: cut between them, the reason held half of one, printed as
  // U+FFFD or as a lone "\ud83c" escape in the JSON output. Found by fuzz.test.ts.
  const [renamed, token] = splitPgn(fixture('emoji-clipped.pgn')).map((raw) =>
    normalizeGame(raw.text, raw.line),
  );
  assert.ok(renamed?.ok && token && !token.ok);
  const warning = renamed.game.warnings?.[0] ?? '';
  assert.equal(warning, `tag Event repeated at line 2: "a${'🎉'.repeat(19)}\u2026" replaced by "Renamed"`);
  assert.equal(token.reason, `unexpected token 'x${'🎉'.repeat(19)}\u2026' at line 8`);
  assert.ok(warning.isWellFormed() && token.reason.isWellFormed());
});

test('an ambiguous SAN move rejects the game', () => {
  assert.deepEqual(reasons('ambiguous.pgn'), ['ambiguous move 3.Nd2 (ply 5, line 4)']);
});

test('a null move rejects the game in the main line; in a variation it cuts the variation', () => {
  assert.deepEqual(reasons('null-move.pgn'), ['null move at 2.-- (ply 3, line 4)', 'ok']);
  const g = normalizeGame(splitPgn(fixture('null-move.pgn'))[1]?.text ?? '');
  assert.ok(g.ok);
  assert.equal(g.game.moves, 'e2e4 e7e5 g1f3 b8c6');
  assert.deepEqual(g.game.warnings, ['variation cut: null move at 2.-- (ply 3, line 4)']);
  assert.ok(g.game.pgn.includes('2. Nf3 Nc6 *'), 'the empty variation is dropped');
});

test('crazyhouse: the variant and a drop are rejected', () => {
  assert.deepEqual(reasons('crazyhouse.pgn'), [
    'unsupported variant Crazyhouse',
    'piece drop 4.P@d4 (ply 7, line 4): drops exist only in Crazyhouse',
  ]);
});

test('long algebraic / UCI-style input moves are accepted', () => {
  const g = only('uci-moves.pgn');
  assert.equal(g.moves, 'e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1 f8c5 d2d4');
  // pgn-extract writes "d3" as en passant square; no black pawn can take on d3.
  assert.equal(g.fen, 'r1bqk2r/pppp1ppp/2n2n2/2b1p3/2BPP3/5N2/PPP2PPP/RNBQ1RK1 b kq - 0 5');
  assert.ok(g.pgn.includes('4. O-O Bc5 5. d4 *'));
});

test('other reasons for rejecting: no game, bad FEN, bad tag, garbage, variants', () => {
  const reason = (text: string) => {
    const r = normalizeGame(text);
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(reason(''), 'no game found');
  assert.equal(reason('   \n{just a comment}\n'), 'no game found');
  assert.equal(
    reason('[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]\n*'),
    'invalid FEN: empty board in "8/8/8/8/8/8/8/8 w - - 0 1"',
  );
  assert.match(reason('[FEN "not a fen"]\n*'), /^invalid FEN: /);
  // An en passant square where no pawn can just have passed, for the side to move; the right rank is fine.
  const afterE4 = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR';
  assert.equal(
    reason(`[FEN "${afterE4} b KQkq e4 0 1"]\n*`),
    `invalid FEN: en passant square off rank 3, where the pawn passed, in "${afterE4} b KQkq e4 0 1"`,
  );
  assert.match(reason(`[FEN "${afterE4} w KQkq e3 0 1"]\n*`), /^invalid FEN: en passant square off rank 6/);
  assert.equal(reason(`[FEN "${afterE4} b KQkq e3 0 1"]\n1... e5 *`), 'ok');
  assert.equal(reason('[SetUp "1"]\n*'), 'invalid FEN: SetUp "1" without a FEN tag');
  assert.equal(reason('[Variant "Atomic"]\n1. e4 *'), 'unsupported variant Atomic');
  assert.equal(reason('[Variant "Antichess"]\n1. e3 *'), 'unsupported variant Antichess');
  // A broken tag of any size gives a reason of a line: a FEN quoted up to 100 characters, a variant up to 40.
  const long = `${afterE4} b KQkq - 0 1 ${'x'.repeat(1_000_000)}`;
  assert.equal(
    reason(`[FEN "${long}"]\n*`),
    `invalid FEN: bad remaining checks in "${long.slice(0, 100)}\u2026"`,
  );
  assert.equal(
    reason(`[Variant "${'y'.repeat(1_000_000)}"]\n*`),
    `unsupported variant ${'y'.repeat(40)}\u2026`,
  );
  assert.equal(reason('[Event "x"\n1. e4 *'), 'malformed tag pair at line 1: [Event "x"');
  assert.equal(reason('1.d4 Nf6 2. Sf3 d5'), "unexpected token 'Sf3' at line 1");
  assert.equal(reason('1. e4 e5 1-0 2. Nf3'), 'text after the result terminator at line 1: 2.');
  assert.equal(reason('1. e4 (1. d4 e5'), "unterminated variation (missing ')')");
  assert.equal(reason('1. e4 {never closed'), 'unterminated comment starting at line 1');
  assert.equal(reason('1. e4 Z0 *'), 'null move at 1...Z0 (ply 2, line 1)');
  assert.equal(
    reason('[Event "a"]\n1. e4 *\n[Event "b"]\n1. d4 *\n'),
    'tag pair after the movetext at line 3 (two games in one text?)',
  );
  assert.equal(
    reason(`1. e4 ${'(1. d4 '.repeat(101)}${')'.repeat(101)} *`),
    'variations nested deeper than 100 at line 1',
  );
});

test('a Result tag that disagrees with the terminator: the tag is kept and wins in the export', () => {
  const r = normalizeGame('[Result "1-0"]\n\n1. e4 e5 0-1\n');
  assert.ok(r.ok);
  assert.equal(r.game.tags.get('Result'), '1-0');
  assert.ok(r.game.pgn.endsWith('[Result "1-0"]\n\n1. e4 e5 1-0\n'));
  // Without a usable Result tag, the terminator decides.
  const t = normalizeGame('[Result ""]\n\n1. e4 e5 0-1\n');
  assert.ok(t.ok);
  assert.equal(t.game.tags.get('Result'), '');
  assert.ok(t.game.pgn.endsWith('[Result "0-1"]\n\n1. e4 e5 0-1\n'));
  const none = normalizeGame('1. e4 e5\n');
  assert.ok(none.ok);
  assert.equal(none.game.tags.size, 0);
  assert.ok(none.game.pgn.endsWith('[Result "*"]\n\n1. e4 e5 *\n'));
});
