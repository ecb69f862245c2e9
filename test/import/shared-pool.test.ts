// The CLI starts one pool of workers for all the files of an import command (poolForFiles), before it opens
// the store; each file's import uses it and leaves it running.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { importFile } from '../../src/import/index.ts';
import { NormalizePool, poolForFiles, worthWorkers } from '../../src/import/normalize-pool.ts';
import { openTestStore } from '../helpers/dialects.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

test('a pool only for imports with enough to check: many games, in one file or several', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-pool-'));
  try {
    // 1.5 MB holding one game (a long comment): large, but little to check.
    const oneGame = join(dir, 'one-game.pgn');
    writeFileSync(oneGame, `[Result "*"]\n\n{${' '.repeat(1.5 << 20)}} *\n`);
    // 1.1 MB of 12,000 short games, as in an opening book.
    const manyGames = join(dir, 'many-games.pgn');
    const line =
      '[Result "*"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 *\n\n';
    writeFileSync(manyGames, line.repeat(12_000));
    assert.equal(await poolForFiles([CLASSICS_PGN, join(dir, 'missing.pgn')]), undefined);
    assert.equal(await poolForFiles([CLASSICS_PGN, oneGame]), undefined);
    assert.equal(await worthWorkers([oneGame]), false);
    assert.equal(await worthWorkers([manyGames]), true);
    // Compressed, the same games are the same work: counted in their text, not in the few KB of the file.
    for (const [name, compress] of [
      ['many-games.pgn.gz', gzipSync],
      ['many-games.pgn.zst', zstdCompressSync],
    ] as const) {
      writeFileSync(join(dir, name), compress(line.repeat(12_000)));
      assert.equal(await worthWorkers([join(dir, name)]), true, name);
    }
    // 4,000 such games check quickly on this thread; three files of them together are worth workers.
    const someGames = join(dir, 'some-games.pgn');
    writeFileSync(someGames, line.repeat(4_000));
    assert.equal(await worthWorkers([someGames]), false);
    assert.equal(await worthWorkers([someGames, someGames, someGames]), true);
    // A named pipe is not opened (that would wait for its writer) nor read (that would take its games).
    const pipe = join(dir, 'pipe.pgn');
    execFileSync('mkfifo', [pipe]);
    assert.equal(await worthWorkers([pipe, dir]), false);
    const pool = await poolForFiles([CLASSICS_PGN, manyGames]);
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
    const owner = await t.store.accounts.addUser({ login: 'pat' });
    const database = await t.store.databases.add({ ownerId: owner.id, name: 'Shared' });
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
    assert.equal((await pool.run(['1. e4 e5 *'])).items.length, 1, 'the pool still answers');
  } finally {
    await pool.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
