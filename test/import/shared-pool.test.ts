// The CLI starts one pool of workers for all the files of an import command (poolForFiles), before it opens
// the store; each file's import uses it and leaves it running.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { importFile } from '../../src/import/index.ts';
import { NormalizePool, poolForFiles, SMALL_INPUT_BYTES } from '../../src/import/normalize-pool.ts';
import { CLASSICS_PGN } from '../http/world.ts';
import { openTestStore } from '../store/dialects.ts';

test('no pool for small or missing files; one for a large file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-pool-'));
  try {
    const large = join(dir, 'large.pgn');
    writeFileSync(large, `{${' '.repeat(SMALL_INPUT_BYTES)}}\n`);
    assert.equal(await poolForFiles([CLASSICS_PGN, join(dir, 'missing.pgn')]), undefined);
    const pool = await poolForFiles([CLASSICS_PGN, large]);
    assert.ok(pool);
    assert.equal(pool.size, 1);
    await pool.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('imports of several files share one pool, which stays up until the caller closes it', async () => {
  const t = await openTestStore('sqlite');
  const pool = new NormalizePool(1);
  const dir = mkdtempSync(join(tmpdir(), 'chessport-pool-'));
  try {
    const owner = await t.store.addUser({ login: 'pat' });
    const database = await t.store.addDatabase({ ownerId: owner.id, name: 'Shared' });
    const first = await importFile({
      store: t.store,
      database,
      file: CLASSICS_PGN,
      pool,
      rejectsFile: join(dir, 'r1.pgn'),
    });
    assert.ok(first.imported > 0);
    assert.equal(first.rejected, 0);
    // The same games again through the same workers: all skipped as duplicates.
    const again = await importFile({
      store: t.store,
      database,
      file: CLASSICS_PGN,
      pool,
      rejectsFile: join(dir, 'r2.pgn'),
    });
    assert.deepEqual([again.imported, again.duplicates], [0, first.imported]);
    assert.equal(pool.size, 1);
    assert.equal((await pool.run(['1. e4 e5 *'])).length, 1, 'the pool still answers');
  } finally {
    await pool.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
