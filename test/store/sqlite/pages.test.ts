// A new SQLite store has 16 KB pages (connect.ts); a store made with another page size keeps it and opens.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../../src/store/index.ts';
import { SqliteAdapter } from '../../../src/store/sqlite/adapter.ts';

const pageSize = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
};

test('a new store has 16 KB pages; an older store keeps its 4 KB pages, works and checkpoints at 40 MB', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-pages-'));
  try {
    const fresh = join(dir, 'fresh.sqlite');
    const store = await openStore(fresh);
    await store.accounts.addUser({ login: 'alice' });
    await store.close();
    assert.equal(pageSize(fresh), 16384);

    const older = join(dir, 'older.sqlite');
    const made = new Database(older);
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.exec('create table earlier (x integer)');
    made.close();
    const reopened = await openStore(older);
    const user = await reopened.accounts.addUser({ login: 'bob' });
    assert.equal((await reopened.accounts.findUser('bob'))?.id, user.id);
    // Its checkpoints still come at 40 MB of WAL: 10,240 of its pages (2,560 of the new ones).
    assert.ok(reopened.dialect instanceof SqliteAdapter);
    assert.equal(reopened.dialect.handle.pragma('wal_autocheckpoint', { simple: true }), 10240);
    await reopened.close();
    assert.equal(pageSize(older), 4096);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a new store and its folder are its owner’s alone, whatever the umask; an existing file keeps its mode', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-mode-'));
  const umask = process.umask(0o022);
  try {
    const file = join(dir, 'data', 'store.sqlite');
    const store = await openStore(file);
    await store.accounts.addUser({ login: 'alice' });
    const mode = (path: string) => statSync(path).mode & 0o777;
    assert.equal(mode(join(dir, 'data')), 0o700);
    for (const path of [file, `${file}-wal`, `${file}-shm`]) assert.equal(mode(path), 0o600, path);
    await store.close();
    chmodSync(file, 0o640);
    const again = await openStore(file);
    await again.close();
    assert.equal(mode(file), 0o640);
  } finally {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  }
});
