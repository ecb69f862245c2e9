// A write waits for a lock that another process or session holds for a bounded time, then fails with the
// store's "locked" error, on both dialects: on PostgreSQL, a row locked by an operator's open transaction
// (`SELECT … FOR UPDATE` in psql) kept `chessport games delete` waiting, silent, for as long as that session
// lived. Once the lock is let go, the same write goes through.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/index.ts';
import { DIALECTS, openTestStore, record, type TestStore } from '../helpers/dialects.ts';

const LOCK_TIMEOUT_MS = 300;

/** Holds a lock on the game's row (PostgreSQL) or the store's write lock (SQLite) until released. */
async function holdLock(t: TestStore, gameId: string): Promise<() => Promise<void>> {
  if (t.store.dialect.name === 'sqlite') {
    const other = new Database(t.url);
    other.exec('begin immediate');
    return async () => {
      other.exec('rollback');
      other.close();
    };
  }
  const client = new pg.Client(t.url);
  await client.connect();
  await client.query('begin');
  await client.query('select id from games where id = $1 for update', [gameId]);
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}

for (const { dialect, skip } of DIALECTS) {
  describe(`a write under another's lock on ${dialect}`, { skip }, () => {
    let t: TestStore;
    let store: Store;
    let gameId: string;

    before(async () => {
      t = await openTestStore(dialect);
      const alice = await t.store.accounts.addUser({ login: 'alice' });
      const database = await t.store.databases.add({ ownerId: alice.id, name: 'games' });
      await t.store.games.insert(database, [record(1)]);
      const [game] = await t.store.games.list(alice.id, { limit: 1, offset: 0 });
      gameId = (game as { id: string }).id;
      store = await openStore(t.url, { lockTimeoutMs: LOCK_TIMEOUT_MS });
    });
    after(async () => {
      await store?.close();
      await t?.close();
    });

    test('fails after the lock timeout, naming the lock; goes through once the lock is let go', async () => {
      const release = await holdLock(t, gameId);
      try {
        const started = performance.now();
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          store.games.delete(gameId).then(
            () => 'deleted under the lock',
            (error: unknown) => error,
          ),
          new Promise((resolve) => {
            timer = setTimeout(resolve, 5000, 'still waiting after 5 s');
          }),
        ]);
        clearTimeout(timer);
        assert.ok(outcome instanceof Error, String(outcome));
        const code = (outcome as { code?: unknown }).code;
        assert.ok(code === '55P03' || code === 'SQLITE_BUSY', `a lock timeout, got ${String(code)}`);
        assert.ok(performance.now() - started >= LOCK_TIMEOUT_MS * 0.9, 'it waited for the lock first');
      } finally {
        await release();
      }
      const deleted = await store.games.delete(gameId);
      assert.equal(deleted?.deleted, true);
    });
  });
}
