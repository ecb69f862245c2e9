// A game's content hash, which finds duplicates, is the SHA-256 of its export PGN (src/import/record.ts): the
// export of a game must not change from one version to the next, or re-importing a file into a store made
// by an earlier version would add its games again. Each fixture game's export, and those of a few layouts
// that exercise every wrapping rule, are pinned here by their hashes. A change that alters them needs a
// migration of the stored hashes, not a new expected value.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { normalizeGame, splitPgn } from '../../src/chess/index.ts';

const FIXTURES = new URL('../fixtures/chess/', import.meta.url);
const EXPECTED = new URL('./export-hashes.json', import.meta.url);

const long = 'x'.repeat(90);
const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
const manyWords = Array.from({ length: 120 }, (_, i) => `w${i * 7}`).join(' ');
/** Forty moves of knights going back and forth: full lines, several exactly 79 characters long. */
const shuffle = Array.from(
  { length: 40 },
  (_, i) => `${i + 1}. ${i % 2 ? 'Ng1' : 'Nf3'} ${i % 2 ? 'Ng8' : 'Nf6'}`,
).join(' ');
const shuffleVariation = Array.from(
  { length: 7 },
  (_, i) => `${i + 6}. ${i % 2 ? 'Nf3 Nc6' : 'Ng1 Nb8'}`,
).join(' ');
/** Layouts that reach each rule of the line wrapper: long comments, a word longer than a line, ')' at the margin. */
const LAYOUTS: Record<string, string> = {
  'comment words across lines': `1. e4 {${words} ${words}} e5 2. Nf3 {${long}} Nc6 *`,
  'variations closing at the margin': `1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 (3... Nf6 4. O-O Nxe4 5. d4 Nd6 6. Bxc6 dxc6 7. dxe5 Nf5 8. Qxd8+ Kxd8) (3... f5 {${words}}) 4. Ba4 (4. Bxc6 dxc6 (4... bxc6 5. O-O f6 6. d4 Ne7 7. dxe5 fxe5 8. Nxe5 Qd4 9. Nf3 Qxe4 10. Re1)) 4... Nf6 *`,
  'nags and numbering after comments': '1. d4 $1 {good} d5 $2 2. c4 {a} {b} e6 $10 $14 3. Nc3 *',
  'lines filled to the margin': `${shuffle} *`,
  // The ')' would end the line at column 80: the variation's last move goes to the next line with it.
  'a variation closing past the margin':
    '1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 5. Nf3 {c} Nf6 (5... Nc6 6. Ng1 Nb8 7. Nf3 Nc6 8. Ng1 Nb8 9. Nf3 Nc6 10. Ng1 Nb8 11. Nf3 Nc6 12. Ng1 Nb8) 6. Ng1 *',
  'a comment filling lines to the margin': `1. e4 {${manyWords}} e5 *`,
  'a comment and a variation among full lines': `${shuffle.replace('5. Nf3 Nf6', `5. Nf3 {${manyWords}} Nf6 (5... Nc6 ${shuffleVariation})`)} *`,
};

function exportsByName(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(FIXTURES).sort()) {
    const encoding = name === 'latin1.pgn' ? 'latin1' : 'utf-8';
    const text = new TextDecoder(encoding).decode(readFileSync(new URL(name, FIXTURES)));
    for (const raw of splitPgn(text)) {
      const r = normalizeGame(raw.text);
      if (r.ok) out[`${name} #${raw.index}`] = r.game.pgn;
    }
  }
  for (const [name, movetext] of Object.entries(LAYOUTS)) {
    const r = normalizeGame(movetext);
    assert.ok(r.ok, name);
    out[name] = r.game.pgn;
  }
  return out;
}

test('the export of every pinned game is what it was when its hash was recorded', () => {
  const sha = (pgn: string) => createHash('sha256').update(pgn).digest('hex');
  const actual = Object.fromEntries(Object.entries(exportsByName()).map(([name, pgn]) => [name, sha(pgn)]));
  if (process.env.CHESSPORT_RECORD_EXPORT_HASHES === '1') {
    // Only for games added to the fixtures: `CHESSPORT_RECORD_EXPORT_HASHES=1 node --test <this file>`.
    writeFileSync(EXPECTED, `${JSON.stringify(actual, null, 2)}\n`);
  }
  const expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, string>;
  assert.deepEqual(actual, expected);
  assert.ok(Object.keys(expected).length >= 20);
});
