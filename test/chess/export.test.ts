import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { isStringOneByteRepresentation } from 'node:v8';
import { normalizeGame, splitPgn } from '../../src/chess/index.ts';
import { assertExportInvariants, movetextOf } from '../helpers/chess-assertions.ts';

function pgnOf(text: string): string {
  const r = normalizeGame(text);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.game.pgn;
}

test('Seven Tag Roster first in order, filled in; other tags in ASCII order', () => {
  const pgn = pgnOf(
    '[eco "x"]\n[White "W"]\n[TimeControl "60"]\n[Event "E"]\n[ECO "C20"]\n[Annotator "A"]\n[Black "B"]\n\n1. e4 1-0\n',
  );
  assert.equal(
    pgn,
    [
      '[Event "E"]',
      '[Site "?"]',
      '[Date "????.??.??"]',
      '[Round "?"]',
      '[White "W"]',
      '[Black "B"]',
      '[Result "1-0"]',
      '[Annotator "A"]',
      '[ECO "C20"]',
      '[TimeControl "60"]',
      '[eco "x"]',
      '',
      '1. e4 1-0',
      '',
    ].join('\n'),
  );
});

test('tag values are unescaped when read and escaped when written', () => {
  const r = normalizeGame('[Event "a \\"b\\" c\\\\d"]\n[Site "back\\\\slash at end\\\\"]\n*\n');
  assert.ok(r.ok);
  assert.equal(r.game.tags.get('Event'), 'a "b" c\\d');
  assert.equal(r.game.tags.get('Site'), 'back\\slash at end\\');
  assert.ok(r.game.pgn.startsWith('[Event "a \\"b\\" c\\\\d"]\n[Site "back\\\\slash at end\\\\"]\n'));
});

test('move numbers: black numbered after comments, NAGs, variations and at line starts', () => {
  const pgn = pgnOf(
    '[Event "n"]\n\n1. e4 {c} e5 2. Nf3 $1 Nc6 3. Bb5 (3. Bc4 Bc5) a6 4. Ba4 (4. Bxc6 dxc6) (4. Bc4) Nf6 ' +
      '(4... b5 5. Bb3) 5. O-O *\n',
  );
  assert.equal(
    movetextOf(pgn),
    '1. e4 {c} 1... e5 2. Nf3 $1 2... Nc6 3. Bb5 (3. Bc4 Bc5) 3... a6 4. Ba4\n' +
      '(4. Bxc6 dxc6) (4. Bc4) 4... Nf6 (4... b5 5. Bb3) 5. O-O *',
  );
});

test('numbering starts at the FEN fullmove number; a game starting with black gets "N..."', () => {
  const fen = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 17';
  assert.equal(
    movetextOf(pgnOf(`[FEN "${fen}"]\n[SetUp "1"]\n\n17... e5 18. Nf3 *\n`)),
    '17... e5 18. Nf3 *',
  );
  // Move numbers in the source do not matter, the position does.
  assert.equal(movetextOf(pgnOf(`[FEN "${fen}"]\n[SetUp "1"]\n\n1. e5 2. Nf3 *\n`)), '17... e5 18. Nf3 *');
});

test('suffix annotations become NAGs $1..$6', () => {
  assert.equal(
    movetextOf(pgnOf('1. e4! e5? 2. Nf3!! Nc6?? 3. Bb5!? a6?! *')),
    '1. e4 $1 1... e5 $2 2. Nf3 $3 2... Nc6 $4 3. Bb5 $5 3... a6 $6 *',
  );
});

test('comments: game comment kept, whitespace collapsed, "}" from ";" comments made safe, %clk kept', () => {
  const pgn = pgnOf(
    '[Event "c"]\n\n{ Before\n  the game. } 1. e4 ; rest of line with } brace\ne5 {[%clk 0:03:00]\n[%eval 0.2]} *\n',
  );
  assert.equal(
    movetextOf(pgn),
    '{Before the game.} 1. e4 {rest of line with ) brace} 1... e5 {[%clk 0:03:00]\n[%eval 0.2]} *',
  );
});

test('lines are wrapped below 80 columns at token boundaries, long comments at their spaces', () => {
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
  const moves =
    '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 ';
  const pgn = pgnOf(`[Event "w"]\n\n${moves}{${words}} 10. d4 Nbd7 *\n`);
  for (const line of pgn.split('\n')) assert.ok(line.length <= 79, `${line.length}: ${line}`);
  const r = normalizeGame(pgn);
  assert.ok(r.ok);
  assert.equal(r.game.pgn, pgn);
  assert.ok(pgn.includes(`{${words.slice(0, 10)}`));
});

test('a single comment word longer than 79 characters gets a line of its own', () => {
  const long = 'x'.repeat(100);
  const pgn = pgnOf(`1. e4 {short ${long} words} e5 *`);
  assert.equal(movetextOf(pgn), `1. e4 {short\n${long}\nwords} 1... e5 *`);
  assertExportInvariants(pgn);
});

test('a word starting with "%" stays on the line before it, even past the margin after a word longer than a line', () => {
  // A '%' in a line's first column starts an escape line (fixture export-format.pgn has the usual cases).
  const long = 'x'.repeat(100);
  const pgn = pgnOf(`1. e4 {short ${long} %eval 0.3 words} e5 *`);
  assert.equal(movetextOf(pgn), `1. e4 {short\n${long} %eval\n0.3 words} 1... e5 *`);
  assertExportInvariants(pgn);
});

test('every fixture: export invariants and round trip', () => {
  const dir = new URL('../fixtures/chess/', import.meta.url);
  let checked = 0;
  for (const name of readdirSync(dir)) {
    const encoding = name === 'latin1.pgn' ? 'latin1' : 'utf-8';
    const text = new TextDecoder(encoding).decode(readFileSync(new URL(name, dir)));
    for (const raw of splitPgn(text)) {
      const r = normalizeGame(raw.text);
      if (!r.ok) continue;
      assertExportInvariants(r.game.pgn, r.game, raw.text);
      checked++;
    }
  }
  assert.ok(checked >= 18, `only ${checked} games checked`);
});

// The export is written as Latin-1 bytes when every character allows it, else as UTF-16 code units, into a
// buffer grown for long games (export-pgn.ts Wrapper): the text must not depend on which, nor on how a string
// is held.

/** The same text held in two bytes a character (a slice of a string that needs them). */
function twoByte(text: string): string {
  const wide = `\u0100${text}`.slice(1);
  assert.ok(!isStringOneByteRepresentation(wide));
  return wide;
}

test('every fixture exports the same whether its text is held in one byte a character or in two', () => {
  const dir = new URL('../fixtures/chess/', import.meta.url);
  let compared = 0;
  for (const name of readdirSync(dir)) {
    const encoding = name === 'latin1.pgn' ? 'latin1' : 'utf-8';
    const text = new TextDecoder(encoding).decode(readFileSync(new URL(name, dir)));
    for (const raw of splitPgn(text)) {
      if (raw.text.length < 13) continue; // too short to be held as a slice
      const r = normalizeGame(raw.text);
      if (!r.ok) continue;
      assert.equal(pgnOf(twoByte(raw.text)), r.game.pgn, `${name} #${raw.index}`);
      compared++;
    }
  }
  assert.ok(compared >= 18, `only ${compared} games compared`);
});

test('a character beyond Latin-1 changes only itself in the export, wherever it is and however long the game', () => {
  const words = (n: number, mark: string) =>
    Array.from({ length: n }, (_, i) => (i % 97 === 50 ? `w${mark}${i}` : `w${i}`)).join(' ');
  const shuffle = Array.from({ length: 30 }, (_, i) => `${i + 1}. ${i % 2 ? 'Ng1 Ng8' : 'Nf3 Nf6'}`).join(
    ' ',
  );
  // A comment in the first line, a long one (past the 128 KB the buffer starts with) and one at the very end.
  const game = (mark: string, last: string) =>
    `[Event "e${mark}"]\n\n{start ${mark}} ${shuffle} {${words(30_000, mark)}} 31. Nf3 {${words(20, last)}} *\n`;
  const latin1 = pgnOf(game('é', 'é'));
  assert.equal(
    pgnOf(game('é', 'ж')),
    latin1.replaceAll('é', (_, at: number) => (at > latin1.length - 200 ? 'ж' : 'é')),
  );
  assert.equal(pgnOf(game('ж', 'ж')), latin1.replaceAll('é', 'ж'));
  assert.equal(pgnOf(game('e', 'e')), latin1.replaceAll('é', 'e'));
  assert.ok(latin1.length > 1 << 17);
  assertExportInvariants(latin1);
});
