// docs/design.md 19 on PostgreSQL, shown step by step with two connections: where sequence values can commit out
// of order, the naive write (take nextval, write, commit) makes a feed reader miss a change for good. The
// store's write (the owner's feed_heads row locked first, then nextval) makes the same interleaving wait,
// so nothing is missed; and it only makes the same owner's writers wait, never another owner's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { Store } from '../../src/store/index.ts';
import type { User } from '../../src/store/types.ts';
import { openTestStore, record, type TestStore } from '../helpers/dialects.ts';
import { POSTGRES_SKIP, queryPostgres, TEST_POSTGRES_URL } from '../helpers/stores.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('feed order on PostgreSQL', { skip: TEST_POSTGRES_URL ? false : POSTGRES_SKIP }, () => {
  let t: TestStore;
  let store: Store;
  let alice: User;
  let bob: User;

  before(async () => {
    t = await openTestStore('postgres');
    store = t.store;
    alice = await store.accounts.addUser({ login: 'alice' });
    bob = await store.accounts.addUser({ login: 'bob' });
  });
  after(async () => {
    await t?.close();
  });

  /** Two games of the owner, and the feed position after them (a reader that is up to date). */
  async function twoGames(owner: User, name: string): Promise<{ g1: string; g2: string; cursor: number }> {
    const db = await store.databases.add({ ownerId: owner.id, name });
    const [g1, g2] = (await store.games.insert(db, [record(1), record(2)])).ids as [string, string];
    const changes = await store.feed.changes(owner.id, 0, 1000);
    return { g1, g2, cursor: changes.at(-1)?.seq as number };
  }

  /** Backends of this test database waiting for a lock: how a blocked writer shows, without a timing guess. */
  async function waitingForLock(): Promise<number> {
    const [row] = await queryPostgres<{ n: number }>(
      t.url,
      "select cast(count(*) as integer) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    return row?.n ?? 0;
  }

  test('naive (nextval, no lock): T1 takes a seq, T2 takes a later one and commits, the reader pages past it, T1 commits behind the cursor: missed', async () => {
    const { g1, g2, cursor } = await twoGames(alice, 'Naive');
    const t1 = new pg.Client(t.url);
    const t2 = new pg.Client(t.url);
    await t1.connect();
    await t2.connect();
    try {
      const write = async (client: pg.Client, id: string) => {
        const { rows } = await client.query<{ seq: string }>("select nextval('change_seq') as seq");
        const seq = Number(rows[0]?.seq);
        await client.query('update games set seq = $1, updated_at = $2 where id = $3', [seq, Date.now(), id]);
        return seq;
      };
      await t1.query('begin');
      const s1 = await write(t1, g1);
      await t2.query('begin');
      const s2 = await write(t2, g2);
      await t2.query('commit');
      assert.ok(s1 < s2);

      const page = await store.feed.changes(alice.id, cursor, 100);
      assert.deepEqual(
        page.map((c) => c.id),
        [g2],
        'the reader sees T2 only',
      );
      const next = page.at(-1)?.seq as number;
      assert.equal(next, s2);

      await t1.query('commit');
      assert.deepEqual(
        await store.feed.changes(alice.id, next, 100),
        [],
        "following the cursor never shows T1's change",
      );
      const fromScratch = await store.feed.changes(alice.id, cursor, 100);
      assert.deepEqual(
        fromScratch.map((c) => [c.id, c.seq]),
        [
          [g1, s1],
          [g2, s2],
        ],
        'yet the change is there, behind the cursor: missed',
      );
    } finally {
      await t1.end();
      await t2.end();
    }
  });

  test("the store's write: the same interleaving makes T2 wait for T1's commit; the reader misses nothing", async () => {
    const { g1, g2, cursor } = await twoGames(alice, 'Locked');
    const other = await twoGames(bob, 'Bob');
    const writer2 = await t.reopen(); // another process's pool, as far as PostgreSQL can tell

    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let tookT1 = () => {};
    const t1Took = new Promise<void>((r) => {
      tookT1 = r;
    });
    let s1 = 0;
    const t1 = store.write(alice.id, async (trx, changes) => {
      const { seqs, now } = await changes.take(1);
      s1 = seqs[0] as number;
      await trx.updateTable('games').set({ seq: s1, updated_at: now }).where('id', '=', g1).execute();
      tookT1();
      await gate; // T1 stays open, uncommitted, holding its seq
    });
    await t1Took;
    try {
      let t2Entered = false;
      const t2 = writer2.games.update(g2, record(22)).then((change) => {
        t2Entered = true;
        return change;
      });
      // T2 is blocked on alice's feed head (a lock wait), before it could take a seq.
      for (let i = 0; i < 200 && (await waitingForLock()) === 0; i++) await sleep(25);
      assert.equal(await waitingForLock(), 1, 'T2 waits for a lock');
      assert.equal(t2Entered, false);

      // Another owner's writer is not held up by alice's open transaction.
      const bobs = await writer2.games.update(other.g1, record(33));
      assert.ok(bobs && bobs.seq > s1, "bob's write commits while alice's T1 is open");
      assert.deepEqual(
        (await store.feed.changes(bob.id, other.cursor, 100)).map((c) => c.id),
        [other.g1],
      );

      // The reader sees none of alice's pending writes, so its cursor stays where it was.
      assert.deepEqual(await store.feed.changes(alice.id, cursor, 100), []);

      release();
      await t1;
      const change2 = await t2;
      assert.ok(change2 && change2.seq > s1, 'T2 took its seq after T1 committed');
      const page1 = await store.feed.changes(alice.id, cursor, 1);
      assert.deepEqual(
        page1.map((c) => [c.id, c.seq]),
        [[g1, s1]],
      );
      const page2 = await store.feed.changes(alice.id, page1[0]?.seq as number, 1);
      assert.deepEqual(
        page2.map((c) => [c.id, c.seq]),
        [[g2, change2.seq]],
      );
    } finally {
      release(); // also when an assertion failed, so that T1 ends and the store can close
    }
  });

  test('writers racing on one owner from several pools: seq order is commit order, times never go back', async () => {
    const carol = await store.accounts.addUser({ login: 'carol' });
    const db = await store.databases.add({ ownerId: carol.id, name: 'Race' });
    const stores = [store, await t.reopen(), await t.reopen()];
    const seen = new Map<string, number>();
    let cursor = 0;
    let lastTime = 0;
    let writing = true;
    const follow = (async () => {
      for (;;) {
        const done = !writing;
        const page = await store.feed.changes(carol.id, cursor, 7);
        for (const change of page) {
          assert.ok(change.updatedAt >= lastTime, 'updatedAt never goes back along the feed');
          lastTime = change.updatedAt;
          seen.set(change.id, change.seq);
        }
        cursor = page.at(-1)?.seq ?? cursor;
        if (done && page.length === 0) return;
      }
    })();
    await Promise.all(
      stores.map(async (writer, w) => {
        for (let i = 0; i < 15; i++) {
          const { ids } = await writer.games.insert(db, [record(1000 * (w + 1) + i)]);
          if (i % 3 === 0) await writer.games.update(ids[0] as string, record(5000 + 100 * w + i));
        }
      }),
    );
    writing = false;
    await follow;
    const final = await store.feed.changes(carol.id, 0, 1000);
    assert.equal(final.length, 45);
    assert.deepEqual(
      [...seen.entries()].sort(),
      final.map((c) => [c.id, c.seq] as [string, number]).sort(),
      'the follower holds every game at its latest seq',
    );
  });
});
