// The progress an import reports: its bytes are those of the games checked so far, not of the text read,
// which runs up to 16 MB ahead of the workers. Reported as read, a file of that size showed all its bytes
// done (and an ETA of 0 s) while its first games were being checked, and then no progress at all while the
// workers caught up.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type ImportProgress, importFile } from '../../src/import/index.ts';
import { NormalizePool } from '../../src/import/normalize-pool.ts';
import { openTestStore } from '../helpers/dialects.ts';
import { writeGames } from '../helpers/production.ts';

const GAMES = 40_000;

test('bytes go with the games checked, never back, up to the size; progress goes on to the last games', {
  timeout: 60_000,
}, async () => {
  const t = await openTestStore('sqlite');
  const pool = new NormalizePool(1);
  const dir = mkdtempSync(join(tmpdir(), 'chessport-progress-'));
  try {
    const file = writeGames(dir, 'even.pgn', GAMES, 'Even'); // games of one size: bytes go with games
    const owner = await t.store.accounts.addUser({ login: 'pat' });
    const database = await t.store.databases.add({ ownerId: owner.id, name: 'Progress' });
    const seen: ImportProgress[] = [];
    await importFile({ store: t.store, database, file, pool, onProgress: (p) => seen.push({ ...p }) });
    assert.ok(seen.length > 10, `${seen.length} reports`);
    const total = seen[0]?.totalBytes ?? 0;
    let before = 0;
    for (const p of seen) {
      assert.ok(p.bytes >= before && p.bytes <= total, `bytes ${p.bytes} after ${before}, of ${total}`);
      before = p.bytes;
      const off = Math.abs(p.bytes / total - p.games / GAMES);
      assert.ok(off < 0.05, `${p.games} games checked, ${p.bytes} of ${total} bytes said done`);
    }
    assert.ok((seen.at(-1)?.games ?? 0) > GAMES * 0.95, `the last report: ${seen.at(-1)?.games} games`);
  } finally {
    await pool.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
