// A token's last use (store.tokens.touch, noted as a request authenticates) never waits for another
// writer: while another process holds a SQLite store's write lock (an import's batch) the note is skipped
// at once, nothing written and nothing failing; once the lock is free the next request writes it. The store
// here waits up to 20 s for locks, as a writer would: a note that waited would stall for that long and fail.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { openStore, type Store } from '../../src/store/index.ts';
import type { TokenInfo } from '../../src/store/types.ts';

let dir: string;
let store: Store;
let token: TokenInfo;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chessport-last-use-'));
  store = await openStore(join(dir, 'store.sqlite'), { lockTimeoutMs: 20_000 });
  const user = await store.accounts.addUser({ login: 'alice' });
  const app = await store.accounts.addApp({ name: 'script' });
  const issued = await store.tokens.issue({
    userId: user.id,
    appId: app.id,
    scopes: ['games.read'],
    expiresAt: null,
  });
  token = (await store.tokens.list()).find((t) => t.id === issued.id) as TokenInfo;
});
after(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lastUse = async () => (await store.tokens.list()).find((t) => t.id === token.id)?.lastUsedAt ?? null;

test("a token's last use is skipped while another process holds the write lock, and written once it is free", async () => {
  assert.equal(token.lastUsedAt, null);
  const importer = new SQLite(join(dir, 'store.sqlite'));
  try {
    importer.exec('begin immediate');
    assert.equal(await store.tokens.touch(token), false, 'skipped, not waited for');
    importer.exec('commit');
  } finally {
    importer.close();
  }
  assert.equal(await lastUse(), null, 'nothing written while the lock was held');
  // The store's own writes go on.
  await store.accounts.addUser({ login: 'bob' });

  const now = Date.now();
  assert.equal(await store.tokens.touch(token, now), true);
  assert.equal(await lastUse(), now);
  const noted = { ...token, lastUsedAt: now };
  assert.equal(await store.tokens.touch(noted, now + 1000), false, 'within the minute: not written again');
});
