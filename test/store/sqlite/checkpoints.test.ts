// An import's checkpoints run on a thread of their own (sqlite/checkpoints.ts): the writer's own are off
// meanwhile and back afterwards, the -wal file stays within its limit, and nothing committed is lost.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { test } from 'node:test';
import { SqliteAdapter } from '../../../src/store/sqlite/adapter.ts';
import { BackgroundCheckpoints } from '../../../src/store/sqlite/checkpoints.ts';
import type { BulkWrites, Database } from '../../../src/store/types.ts';
import { record, sqliteStorePerTest } from '../../helpers/dialects.ts';
import { queryStore } from '../../helpers/stores.ts';

// A store each: the -wal file never shrinks, so each test starts from an empty one.
const fresh = sqliteStorePerTest();

/** 100 games of about 5 KB each: half a megabyte a batch. */
function batch(database: Database, n: number) {
  const games = Array.from({ length: 100 }, (_, i) =>
    record(n * 100 + i, { pgn: `[Event "${n}-${i}"]\n\n${'1. e4 {long comment} e5 '.repeat(200)}1-0\n` }),
  );
  return fresh.t.store.games.insert(database, games);
}

/** Batch n written as an import writes it: once `bulk` is ready, and reported to it as committed. */
async function bulkBatch(bulk: BulkWrites, database: Database, n: number): Promise<void> {
  await bulk.ready();
  await batch(database, n);
  bulk.committed();
}

/** A new database of alice's, and the store's SQLite handle. */
async function databaseAndHandle(name: string) {
  const database = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name });
  const { dialect } = fresh.t.store;
  assert.ok(dialect instanceof SqliteAdapter);
  return { database, handle: dialect.handle };
}

/** The games of the database, counted through another connection. */
async function countOnAnotherConnection(database: Database): Promise<number | undefined> {
  const [row] = await queryStore<{ n: number }>(
    fresh.t.url,
    `select count(*) as n from games where database_id = '${database.id}'`,
  );
  return row?.n;
}

test('during bulk writes the writer does not checkpoint; afterwards it does again', async () => {
  const { database, handle } = await databaseAndHandle('Bulk');
  const autocheckpoint = () => handle.pragma('wal_autocheckpoint', { simple: true });
  // 40 MB of WAL in 16 KB pages.
  assert.equal(autocheckpoint(), 2560);
  const bulk = fresh.t.store.dialect.bulkWrites();
  assert.equal(autocheckpoint(), 0);
  for (let n = 0; n < 10; n++) {
    await bulkBatch(bulk, database, n);
  }
  await bulk.end();
  assert.equal(autocheckpoint(), 2560);
  // The games are all there, for another connection too.
  assert.equal(await countOnAnotherConnection(database), 1000);
});

test('the -wal file stays within the limit however fast the writer goes', async () => {
  const { database, handle } = await databaseAndHandle('Limit');
  const limit = 1 << 20;
  const bulk = new BackgroundCheckpoints(handle, limit);
  let largest = 0;
  for (let n = 100; n < 140; n++) {
    await bulkBatch(bulk, database, n);
    largest = Math.max(largest, statSync(`${fresh.t.url}-wal`).size);
  }
  await bulk.end();
  // Once past the limit the writer's next transaction waits for a checkpoint of all it wrote, and the WAL
  // then starts over: it overshoots by at most the batch that crossed the limit (about 1.5 MB with the pages
  // of the games' indexes, the list filters' among them).
  assert.ok(largest <= limit + (2 << 20), `the WAL reached ${largest} bytes`);
  assert.equal(await countOnAnotherConnection(database), 4000);
});

test('once the WAL has started afresh, a commit does not wait, though the -wal file keeps its size', async () => {
  const { database, handle } = await databaseAndHandle('Afresh');
  const limit = 4 << 20; // three or four batches (a batch is about 1.3 MB of WAL with its index pages)
  const bulk = new BackgroundCheckpoints(handle, limit);
  try {
    // Past the limit: the next transaction waits for a checkpoint of everything, then starts the WAL afresh.
    let n = 200;
    while (statSync(`${fresh.t.url}-wal`).size <= limit) {
      await bulkBatch(bulk, database, n++);
    }
    await bulkBatch(bulk, database, n++);
    // SQLite reuses the -wal file from its start without shrinking it; what is in use is one batch.
    assert.ok(statSync(`${fresh.t.url}-wal`).size > limit);
    const next = await Promise.race([
      bulk.ready().then(() => 'ready'),
      new Promise((resolve) => setImmediate(() => resolve('waiting for a checkpoint'))),
    ]);
    assert.equal(next, 'ready');
  } finally {
    await bulk.end();
  }
});
