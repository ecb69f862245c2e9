// Reads routed to a replica (src/store/read-routing.ts) that replays while a read runs: the replica here is
// the test store's own connection behind a runner whose first statement still sees the state before the
// game was written (the replica had not replayed it) and whose later statements see all of it (replay
// caught up in between). A game a feed page showed, asked for with that page's position, is never missing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/index.ts';
import type { Replicas } from '../../src/store/read-routing.ts';
import type { User } from '../../src/store/types.ts';
import { openTestStore, record, type TestStore } from '../helpers/dialects.ts';

describe('a replica that replays between two statements of one read', () => {
  let t: TestStore;
  let store: Store;
  let alice: User;

  before(async () => {
    t = await openTestStore('sqlite');
    store = t.store;
    alice = await store.accounts.addUser({ login: 'alice' });
  });
  after(async () => {
    await t?.close();
  });

  /** Reads go to a "replica" whose first statement sees nothing of the store, and the rest all of it. */
  function replayingReplica(): void {
    const { primary } = store.reads;
    let statements = 0;
    const replica = {
      ...primary,
      name: 'replica:test',
      kind: 'replica' as const,
      run: (text: string, parameters: readonly unknown[]) =>
        statements++ === 0 ? Promise.resolve([]) : primary.run(text, parameters),
    };
    const replicas: Replicas = {
      pick: () => replica,
      failed: () => {},
      states: () => [{ name: replica.name, healthy: true, lagSeconds: 0 }],
      close: async () => {},
    };
    store.reads.use(replicas);
  }

  test("GET /games/{id} with a page's position finds the game the page showed", async () => {
    const db = await store.databases.add({ ownerId: alice.id, name: 'A' });
    const [id] = (await store.games.insert(db, [record(1)])).ids as [string];
    const page = await store.feed.changes(alice.id, 0, 50);
    const position = page.at(-1)?.seq as number;
    assert.equal(page.at(-1)?.id, id);

    replayingReplica();
    const game = await store.games.get(alice.id, id, position);
    assert.equal(game?.id, id, 'the game the page showed is found, on the replica or the primary');
  });
});
