// textSize: what the import's decisions by size (workers, the checkpoint thread) take a file's text to be.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { textSize } from '../../src/import/input.ts';

const dir = mkdtempSync(join(tmpdir(), 'chessport-text-size-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const text = Buffer.from('[Event "x"]\n\n1. e4 e5 2. Nf3 Nc6 1-0\n\n'.repeat(5000));

test('a plain file is its size, sampled or not', async () => {
  const file = join(dir, 'plain.pgn');
  writeFileSync(file, text);
  assert.equal((await textSize(file, 0)).size, text.length);
  const sampled = await textSize(file, 100);
  assert.equal(sampled.size, text.length);
  assert.deepEqual(sampled.sample, text.subarray(0, 100));
});

test('a compressed file is taken at its text, also without a sample (the import asks so)', async () => {
  for (const [name, bytes] of [
    ['games.pgn.gz', gzipSync(text)],
    ['games.pgn.zst', zstdCompressSync(text)],
  ] as const) {
    const file = join(dir, name);
    writeFileSync(file, bytes);
    for (const sample of [0, 1 << 20]) {
      const { size } = await textSize(file, sample);
      assert.ok(size >= bytes.length * 3, `${name}, sample ${sample}: ${size} for ${bytes.length} bytes`);
    }
  }
  // gzip's trailer says the text's size exactly.
  assert.equal((await textSize(join(dir, 'games.pgn.gz'), 0)).size, text.length);
});
