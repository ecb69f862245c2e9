// SQLite's dedup check reads the game_keys log (sqlite/game-keys.ts): the log's keys point to the rows they
// were written for, whatever statements the batch took; another connection's imports are seen at the next
// write; a deleted database leaves no keys; the log is only read from where this connection left it; the keys
// are the numbers the log has always held.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { gameKey } from '../../../src/store/sqlite/game-keys.ts';
import type { GameRecord } from '../../../src/store/types.ts';
import { record, sqliteStorePerTest } from '../../helpers/dialects.ts';
import { queryStore } from '../../helpers/stores.ts';

const fresh = sqliteStorePerTest();

const hex = (n: number) => n.toString(16).padStart(64, '0');

/** Each logged key with the pk it points to, in log order. */
function loggedKeys(url: string): { databaseId: string; pk: number; key: number }[] {
  const db = new SQLite(url, { readonly: true });
  try {
    const rows = db.prepare('select database_id, first_pk, keys from game_keys order by id').all() as {
      database_id: string;
      first_pk: number;
      keys: Buffer;
    }[];
    return rows.flatMap((r) =>
      Array.from({ length: r.keys.length / 6 }, (_, i) => ({
        databaseId: r.database_id,
        pk: r.first_pk + i,
        key: r.keys.readUIntBE(i * 6, 6),
      })),
    );
  } finally {
    db.close();
  }
}

test('each logged key points to the row of its game, across statements of every size and shape', async () => {
  const database = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name: 'Keys' });
  // 1,300 games in runs with and without players (separate statements of 1,024, 128, 16 and 4 rows).
  const games: GameRecord[] = Array.from({ length: 1300 }, (_, i) =>
    record(i, {
      contentHash: hex(i * 7919 + 1),
      ...(i % 300 < 150 && { white: { name: null, elo: null, fideId: null, country: null } }),
    }),
  );
  await fresh.t.store.games.insert(database, games);
  const rows = await queryStore<{ pk: number; content_hash: string }>(
    fresh.t.url,
    'select pk, content_hash from games order by pk',
  );
  const hashOf = new Map(rows.map((r) => [Number(r.pk), r.content_hash]));
  const logged = loggedKeys(fresh.t.url);
  assert.equal(logged.length, 1300);
  for (const { databaseId, pk, key } of logged) {
    assert.equal(databaseId, database.id);
    assert.equal(key, gameKey(hashOf.get(pk) as string));
  }
});

test('another connection sees the games this one added at its next write, and this one its games', async () => {
  const database = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name: 'Shared' });
  const other = await fresh.t.reopen();
  const [a, b, c] = [1, 2, 3].map((n) => record(n, { contentHash: hex(n) })) as [
    GameRecord,
    GameRecord,
    GameRecord,
  ];
  assert.equal((await fresh.t.store.games.insert(database, [a])).inserted, 1);
  const second = await other.games.insert(database, [a, b]);
  assert.deepEqual([second.inserted, second.duplicates], [1, 1]);
  // This connection read the log before: it reads on from there and finds b.
  const third = await fresh.t.store.games.insert(database, [b, c]);
  assert.deepEqual([third.inserted, third.duplicates], [1, 1]);
  assert.equal(await fresh.t.store.databases.countGames(database.id), 3);
});

test('a deleted database leaves no keys in the log; a game stays findable in the others', async () => {
  const kept = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name: 'Kept' });
  const gone = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name: 'Gone' });
  await fresh.t.store.games.insert(kept, [record(1, { contentHash: hex(1) })]);
  await fresh.t.store.games.insert(gone, [
    record(1, { contentHash: hex(1) }),
    record(2, { contentHash: hex(2) }),
  ]);
  await fresh.t.store.databases.delete(gone);
  assert.deepEqual(
    loggedKeys(fresh.t.url).map((k) => k.databaseId),
    [kept.id],
  );
  assert.equal((await fresh.t.store.games.insert(kept, [record(1, { contentHash: hex(1) })])).duplicates, 1);
});

test('keys of hashes that are not hex still find their games', async () => {
  const database = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name: 'Odd hashes' });
  const odd = ['hash-1', 'zzzzzzzzzzzzzzzz', ''].map((contentHash, n) => record(n, { contentHash }));
  assert.equal((await fresh.t.store.games.insert(database, odd)).inserted, 3);
  assert.equal((await fresh.t.store.games.insert(database, odd)).duplicates, 3);
  assert.notEqual(gameKey('hash-1'), gameKey('hash-2'));
});

test('a key is the first 48 bits of a hex hash, as the log has always held them', () => {
  // The key as migration 0005 and earlier imports wrote it to the log: a hex hash's first 12 digits read by
  // Number(); other text through SHA-256. Keys read digit by digit must be the same numbers.
  const asLogged = (hash: string) => {
    const key = hash.length >= 12 ? Number(`0x${hash.slice(0, 12)}`) : Number.NaN;
    return Number.isNaN(key) ? createHash('sha256').update(hash).digest().readUIntBE(0, 6) : key;
  };
  const hashes = [
    createHash('sha256').update('game').digest('hex'),
    'ffffffffffff',
    '000000000000',
    'ABCDEFabcdef0123',
    'abcdefabcde',
    'abcdefabcdeg',
    ' abcdefabcde',
    'abcdefabcde ',
    'abcdefabcd\u0661e',
    'hash-1',
    '',
  ];
  for (const hash of hashes) assert.equal(gameKey(hash), asLogged(hash), JSON.stringify(hash));
  assert.equal(gameKey('ffffffffffff'), 2 ** 48 - 1);
});
