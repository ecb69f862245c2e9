// The change-signal bus on both dialects (src/store/change-signals.ts): a write signals its owner's
// subscribers after it commits (in this process at once, in another through LISTEN/NOTIFY or the SQLite
// poller), never for a write that rolled back, never another owner's subscribers; a subscription to every
// owner hears each; an unsubscribed callback hears nothing more.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ANY_OWNER, type Store } from '../../src/store/index.ts';
import type { Database, User } from '../../src/store/types.ts';
import { DIALECTS, openTestStore, record, type TestStore } from '../helpers/dialects.ts';

/** Resolves with the first signal that passes `match`, or undefined after ms. */
function nextSignal(
  store: Store,
  owner: string | typeof ANY_OWNER,
  ms: number,
  match: (ownerId: string | undefined) => boolean = () => true,
): Promise<string | undefined | 'none'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      unsubscribe();
      resolve('none');
    }, ms);
    const unsubscribe = store.signals.subscribe(owner, (ownerId) => {
      if (!match(ownerId)) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(ownerId);
    });
  });
}

/** Lets a source that just started (LISTEN, the poller's first read) settle, and its "read again" pass. */
async function settled(store: Store, owner: string): Promise<() => void> {
  const unsubscribe = store.signals.subscribe(owner, () => undefined);
  await new Promise((r) => setTimeout(r, 500));
  return unsubscribe;
}

for (const { dialect, skip } of DIALECTS) {
  describe(`change signals on ${dialect}`, { skip }, () => {
    let t: TestStore;
    let store: Store;
    let other: Store;
    let alice: User;
    let bob: User;
    let aliceDb: Database;
    let bobDb: Database;

    before(async () => {
      t = await openTestStore(dialect);
      store = t.store;
      other = await t.reopen();
      alice = await store.accounts.addUser({ login: 'alice' });
      bob = await store.accounts.addUser({ login: 'bob' });
      aliceDb = await store.databases.add({ ownerId: alice.id, name: 'A' });
      bobDb = await store.databases.add({ ownerId: bob.id, name: 'B' });
    });
    after(async () => {
      await t?.close();
    });

    test('a write in this process signals its owner once committed, with what it wrote visible', async () => {
      let seen: number | undefined;
      const signalled = new Promise<string | undefined>((resolve) => {
        const unsubscribe = store.signals.subscribe(alice.id, (ownerId) => {
          // The first subscription starts the source, which asks every subscriber to read again (undefined).
          if (ownerId === undefined) return;
          unsubscribe();
          // Synchronously, from the signal: the write has committed, and a read sees it.
          void store.feed.changes(alice.id, 0, 1000).then((changes) => {
            seen = changes.length;
            resolve(ownerId);
          });
        });
      });
      const outcome = await store.games.insert(aliceDb, [record(1)]);
      assert.equal(await signalled, alice.id);
      assert.equal(seen, outcome.ids.length);
    });

    test('a write in another process (another store on the same data) signals the owner here', async () => {
      const ready = await settled(store, alice.id);
      try {
        const signalled = nextSignal(store, alice.id, 10_000, (ownerId) => ownerId === alice.id);
        await other.games.insert(aliceDb, [record(2)]);
        assert.equal(await signalled, alice.id);
      } finally {
        ready();
      }
    });

    test('another owner’s write does not signal; a subscription to every owner hears it', async () => {
      const ready = await settled(store, alice.id);
      try {
        const forAlice = nextSignal(store, alice.id, 1500);
        const forAnyone = nextSignal(store, ANY_OWNER, 10_000);
        await other.games.insert(bobDb, [record(3)]);
        // The poller knows of changes of subscribed owners by id; of the others only that they happened.
        assert.ok([bob.id, undefined].includes((await forAnyone) as string | undefined));
        assert.equal(await forAlice, 'none');
      } finally {
        ready();
      }
    });

    test('a write that rolls back signals nothing, here or elsewhere', async () => {
      const ready = await settled(store, alice.id);
      const readyOther = await settled(other, alice.id);
      try {
        const here = nextSignal(store, alice.id, 1500);
        const there = nextSignal(other, alice.id, 1500);
        await assert.rejects(
          store.write(alice.id, async (_trx, changes) => {
            await changes.take(1);
            throw new Error('rolled back');
          }),
          /rolled back/,
        );
        assert.equal(await here, 'none');
        assert.equal(await there, 'none');
      } finally {
        ready();
        readyOther();
      }
    });

    test('an unsubscribed callback hears nothing more', async () => {
      let calls = 0;
      const unsubscribe = store.signals.subscribe(alice.id, () => {
        calls++;
      });
      unsubscribe();
      unsubscribe(); // twice is once
      await store.games.insert(aliceDb, [record(4)]);
      assert.equal(calls, 0);
      assert.equal(store.signals.size, 0);
    });
  });
}
