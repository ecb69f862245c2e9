// PostgreSQL: an import analyses the games table once it has more than doubled since its statistics were
// taken (postgres/game-insert.ts), so that the dedup lookups keep to the dedup index: without statistics the
// planner read the whole table for each lookup, and an import into a new store slowed down quadratically.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../../src/store/index.ts';
import type { Database } from '../../../src/store/types.ts';
import { DIALECTS, openTestStore, record, type TestStore } from '../../helpers/dialects.ts';
import { queryStore } from '../../helpers/stores.ts';

const postgres = DIALECTS.find((d) => d.dialect === 'postgres');

describe('the games table on PostgreSQL', { skip: postgres?.skip ?? 'no PostgreSQL case' }, () => {
  let t: TestStore;
  let store: Store;
  let database: Database;

  before(async () => {
    t = await openTestStore('postgres');
    store = t.store;
    const owner = await store.accounts.addUser({ login: 'analyst' });
    database = await store.databases.add({ ownerId: owner.id, name: 'Many' });
  });
  after(async () => {
    await t?.close();
  });

  const lastAnalyze = async () =>
    (
      await queryStore<{ last_analyze: unknown }>(
        t.url,
        "select last_analyze from pg_stat_user_tables where relname = 'games'",
      )
    )[0]?.last_analyze ?? null;

  test('is analysed by an import once it has more than doubled; lookups then use the dedup index', async () => {
    assert.equal(await lastAnalyze(), null, 'a new store has no statistics');
    let n = 0;
    const batch = (size: number) => Array.from({ length: size }, () => record(n++, { contentHash: `h${n}` }));
    await store.games.insert(database, batch(6000));
    await store.games.insert(database, batch(6000));
    // The server counts changes at each transaction's end and publishes them within a second.
    for (let tries = 0; tries < 20 && (await lastAnalyze()) === null; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await store.games.insert(database, batch(10));
    }
    assert.notEqual(await lastAnalyze(), null, 'analysed after 12,000 games');
    const [size] = await queryStore<{ reltuples: number }>(
      t.url,
      "select reltuples::float8 as reltuples from pg_class where relname = 'games'",
    );
    assert.ok(Number(size?.reltuples) >= 12_000, 'the planner knows how many games there are');
    // A few keys are looked up on the index (for 500 keys in a table this small, reading it is cheaper).
    const plan = await queryStore<{ 'QUERY PLAN': string }>(
      t.url,
      "explain select content_hash from games where dedup_key = any(array['k1', 'k2', 'k3'])",
    );
    assert.match(plan.map((p) => p['QUERY PLAN']).join('\n'), /games_dedup_key/);
    const again = await store.games.insert(database, [record(1, { contentHash: 'h2' })]);
    assert.equal(again.duplicates, 1);
  });
});
