// Every file of the PGN corpus (test/helpers/corpus.ts, see its MANIFEST.md): games found and
// accepted, compared with pgn-extract 19.04's "games / ok" from the MANIFEST. Each
// difference is explained next to its row. Every accepted game must also keep the export
// promises (line length, round trip; see helpers.ts).
//
// The three largest files (100 MB pgnmentor, 44 MB TCEC, 16 MB bjbraams) are only sampled
// (their first 2 MB) unless CHESSPORT_FULL_CORPUS=1, which checks them whole (a few minutes).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { normalizeGame } from '../../src/chess/index.ts';
import { assertExportInvariants } from '../helpers/chess-assertions.ts';
import { CORPUS, NO_CORPUS } from '../helpers/corpus.ts';
import {
  CORPUS_FILES,
  EXPECTED,
  type Expected,
  FULL,
  SAMPLE_BYTES,
  splitFile,
} from '../helpers/corpus-table.ts';

const files = CORPUS_FILES;

test('the corpus table lists exactly the corpus files', {
  skip: files.length === 0 && NO_CORPUS,
}, () => {
  assert.deepEqual(
    files,
    Object.keys(EXPECTED).sort((a, b) => files.indexOf(a) - files.indexOf(b)),
  );
  assert.deepEqual(new Set(files), new Set(Object.keys(EXPECTED)));
});

for (const file of Object.keys(EXPECTED)) {
  const expected = EXPECTED[file] as Expected;
  const path = join(CORPUS, file);
  const sampled = expected.big && !FULL;
  const name = `${file}: ${expected.games} games, ${expected.ok} accepted${sampled ? ' (first 2 MB only)' : ''}`;
  const skip = !existsSync(path) ? `corpus file not found: ${path}` : false;
  test(name, { skip }, () => {
    const raws = splitFile(path, sampled ? SAMPLE_BYTES : Number.POSITIVE_INFINITY);
    const rejects: string[] = [];
    for (const raw of raws) {
      const r = normalizeGame(raw.text);
      if (!r.ok) {
        rejects.push(r.reason);
        continue;
      }
      try {
        // The big files' games are all plain; checking a tenth keeps the suite fast.
        if (!expected.big || raw.index % 10 === 0) assertExportInvariants(r.game.pgn, r.game, raw.text);
      } catch (err) {
        throw new Error(`${file} game ${raw.index} (line ${raw.line}): ${(err as Error).message}`);
      }
    }
    if (sampled) {
      assert.ok(raws.length > 0);
      assert.deepEqual(rejects, [], 'the sample has no rejects');
      return;
    }
    assert.equal(raws.length, expected.games, 'games found');
    assert.equal(
      raws.length - rejects.length,
      expected.ok,
      `games accepted; rejects: ${rejects.slice(0, 5)}`,
    );
    if (expected.reject !== undefined) assert.equal(rejects[0], expected.reject);
    if (expected.pgnExtract[0] !== expected.games || expected.pgnExtract[1] !== expected.ok) {
      assert.ok(expected.note, 'a difference from pgn-extract is explained');
    }
  });
}
