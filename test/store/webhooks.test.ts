// The webhooks' part of the store on both dialects: the outbox written in the change's own transaction, who
// may hear of whom, the fan-out into one pending delivery per endpoint and user, leases that give each
// attempt to one instance, and the outcomes of attempts (docs/webhooks.md).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { App, CoalescingRule, Database, Store, User } from '../../src/store/index.ts';
import { DIALECTS, openTestStore, record, type TestStore } from '../helpers/dialects.ts';

/** Every delivery at once, whatever came before: the coalescing has tests of its own. */
const AT_ONCE: CoalescingRule = (_previous, now) => ({ dueAt: now, spacingMs: 0 });

for (const { dialect, skip } of DIALECTS) {
  describe(`webhooks in the store on ${dialect}`, { skip }, () => {
    let t: TestStore;
    let store: Store;
    let alice: User;
    let bob: User;
    let appOne: App;
    let appTwo: App;
    let aliceDb: Database;
    let bobDb: Database;
    let n = 0;

    const signals = async () =>
      (await store.db.selectFrom('webhook_signals').selectAll().orderBy('user_id').execute()).map((row) => ({
        user: row.user_id,
        changes: Number(row.changes),
      }));
    const pending = async () =>
      (
        await store.db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('status', '=', 'pending')
          .orderBy('endpoint_id')
          .orderBy('user_id')
          .execute()
      ).map((row) => ({ endpoint: row.endpoint_id, user: row.user_id, changes: Number(row.changes) }));
    const insert = (db: Database, count = 1) =>
      store.games.insert(
        db,
        Array.from({ length: count }, () => record(++n, { contentHash: `wh-${dialect}-${n}` })),
      );
    const fanOut = (now = Date.now(), rule = AT_ONCE) =>
      store.webhooks.outbox.fanOut({ limit: 100, now, rule, lookbackMs: 120_000 });
    const claim = (s = store, now = Date.now(), limit = 10) =>
      s.webhooks.deliveries.claim({ limit, now, leaseMs: 15_000 });

    /**
     * An endpoint of app one that alice reads through, and one change of hers fanned out and claimed: its first
     * attempt, under way since `now`.
     */
    const firstAttempt = async () => {
      const { endpoint } = await store.webhooks.endpoints.add({
        appId: appOne.id,
        url: 'https://one.example/',
      });
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      await insert(aliceDb);
      await fanOut();
      const now = Date.now();
      const [attempt] = (await claim(store, now)) as [NonNullable<Awaited<ReturnType<typeof claim>>[number]>];
      return { endpoint, attempt, now };
    };

    before(async () => {
      t = await openTestStore(dialect);
      store = t.store;
      alice = await store.accounts.addUser({ login: 'alice' });
      bob = await store.accounts.addUser({ login: 'bob' });
      appOne = await store.accounts.addApp({ name: 'one' });
      appTwo = await store.accounts.addApp({ name: 'two' });
      aliceDb = await store.databases.add({ ownerId: alice.id, name: 'A' });
      bobDb = await store.databases.add({ ownerId: bob.id, name: 'B' });
    });
    after(async () => {
      await t?.close();
    });
    beforeEach(async () => {
      await store.db.deleteFrom('webhook_deliveries').execute();
      await store.db.deleteFrom('webhook_endpoints').execute();
      await store.db.deleteFrom('webhook_signals').execute();
      await store.db.deleteFrom('tokens').execute();
    });

    test('every write transaction that changes games records one signal for its owner, in the same transaction', async () => {
      await insert(aliceDb, 250);
      assert.deepEqual(await signals(), [{ user: alice.id, changes: 250 }], 'one row however many games');
      const game = (await store.games.list(alice.id, { limit: 1, offset: 0 }))[0] as { id: string };
      await store.games.update(game.id, record(++n, { contentHash: `wh-upd-${n}` }));
      await store.games.delete(game.id);
      assert.deepEqual(await signals(), [{ user: alice.id, changes: 252 }], 'later writes add to the row');
      // A write that changes nothing (a move to where the game is) and one that rolls back record nothing.
      const other = (await store.games.list(alice.id, { limit: 1, offset: 0 }))[0] as { id: string };
      await store.games.move(other.id, aliceDb);
      await assert.rejects(
        store.write(bob.id, async (trx, changes) => {
          await changes.take(3);
          await trx.insertInto('settings').values({ key: 'wh-rollback', value: 'x' }).execute();
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.deepEqual(await signals(), [{ user: alice.id, changes: 252 }]);
      await insert(bobDb, 2);
      assert.deepEqual(
        await signals(),
        [
          { user: alice.id, changes: 252 },
          { user: bob.id, changes: 2 },
        ].sort((a, b) => (a.user < b.user ? -1 : 1)),
      );
    });

    test('an app hears of a user only through an active token of theirs with games.read', async () => {
      const hears = async (user: User) =>
        (await store.webhooks.hearing.apps([user.id])).map(
          (p) => p.appId === appOne.id && p.userId === user.id,
        );
      assert.deepEqual(await hears(alice), [], 'no token, no hearing');
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['user.read'],
        expiresAt: null,
      });
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['user.read', 'games.read'],
        expiresAt: Date.now() - 1,
      });
      const revoked = await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      await store.tokens.revoke(revoked.id);
      await store.tokens.issue({ userId: bob.id, appId: appOne.id, scopes: ['games.read'], expiresAt: null });
      assert.deepEqual(
        await hears(alice),
        [],
        'without games.read, expired or revoked: no; bob’s token is not hers',
      );
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['databases.read', 'games.read'],
        expiresAt: Date.now() + 60_000,
      });
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      assert.deepEqual(await hears(alice), [true], 'two active tokens: the app once');
    });

    test('an app also hears of a user through an OAuth grant with games.read, until it is revoked', async () => {
      const hears = async (user: User) =>
        (await store.webhooks.hearing.apps([user.id]))
          .filter((p) => p.appId === appTwo.id)
          .map((p) => p.userId === user.id);
      const grant = { id: 'grant-1', userId: bob.id, appId: appTwo.id, scopes: ['user.read'], payload: '{}' };
      assert.equal(await store.oauth.grants.save(grant), true);
      assert.deepEqual(await hears(bob), [], 'a grant without games.read');
      // Its hour-long access tokens may all have expired: the consent itself lets the app hear.
      assert.equal(await store.oauth.grants.save({ ...grant, scopes: ['user.read', 'games.read'] }), true);
      assert.deepEqual(await hears(bob), [true]);
      assert.deepEqual(await hears(alice), [], 'bob’s grant is not hers');
      await store.oauth.grants.revoke('grant-1');
      assert.deepEqual(await hears(bob), [], 'revoked on /account: no more');
    });

    test('the fan-out: each endpoint of an app that hears of the user gets one delivery; nobody else’s', async () => {
      const one = (await store.webhooks.endpoints.add({ appId: appOne.id, url: 'https://one.example/a' }))
        .endpoint;
      const oneBis = (await store.webhooks.endpoints.add({ appId: appOne.id, url: 'https://one.example/b' }))
        .endpoint;
      const two = (await store.webhooks.endpoints.add({ appId: appTwo.id, url: 'https://two.example/' }))
        .endpoint;
      const off = (await store.webhooks.endpoints.add({ appId: appTwo.id, url: 'https://two.example/off' }))
        .endpoint;
      await store.webhooks.endpoints.setDisabled(off.id, { at: Date.now(), reason: 'test' });
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      await store.tokens.issue({ userId: bob.id, appId: appTwo.id, scopes: ['games.read'], expiresAt: null });
      await insert(aliceDb, 3);
      await insert(bobDb, 1);
      assert.equal(await fanOut(), 2);
      assert.deepEqual(await signals(), [], 'the outbox is emptied');
      const expected = [
        { endpoint: one.id, user: alice.id, changes: 3 },
        { endpoint: oneBis.id, user: alice.id, changes: 3 },
        { endpoint: two.id, user: bob.id, changes: 1 },
      ].sort((a, b) => (a.endpoint < b.endpoint ? -1 : 1));
      assert.deepEqual(await pending(), expected);
      // More changes join the pending deliveries: still one per endpoint and user.
      await insert(aliceDb, 2);
      await fanOut();
      assert.deepEqual(
        await pending(),
        expected.map((d) => (d.user === alice.id ? { ...d, changes: 5 } : d)),
      );
      assert.equal(await fanOut(), 0, 'nothing left');
    });

    test('a lease gives each due delivery to one instance; a lease that ran out lets another take it', async () => {
      const endpoint = (await store.webhooks.endpoints.add({ appId: appOne.id, url: 'https://one.example/' }))
        .endpoint;
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      await store.tokens.issue({ userId: bob.id, appId: appOne.id, scopes: ['games.read'], expiresAt: null });
      await insert(aliceDb);
      await insert(bobDb);
      await fanOut();
      const other = await t.reopen();
      const now = Date.now();
      const [first, second] = await Promise.all([claim(store, now, 1), claim(other, now, 1)]);
      const ids = [...(first ?? []), ...(second ?? [])].map((c) => c.id);
      // PostgreSQL: SKIP LOCKED hands each a different row at once; SQLite: the write lock, one after the other.
      assert.equal(new Set(ids).size, ids.length, 'no delivery leased twice');
      const rest = await claim(store, now, 10);
      assert.equal(ids.length + rest.length, 2, 'both deliveries leased, each once');
      assert.deepEqual(await claim(other, now + 14_000), [], 'leased: nobody takes them');
      const again = await claim(other, now + 15_001);
      assert.equal(again.length, 2, 'the leases ran out (a killed instance): attempted again');
      assert.ok(again.every((c) => c.attempt === 2 && c.endpointId === endpoint.id));
    });

    test('a delivery succeeds; changes that joined it during the attempt get a delivery of their own', async () => {
      await store.webhooks.endpoints.add({ appId: appOne.id, url: 'https://one.example/' });
      await store.tokens.issue({
        userId: alice.id,
        appId: appOne.id,
        scopes: ['games.read'],
        expiresAt: null,
      });
      await insert(aliceDb, 2);
      await fanOut();
      const [attempt] = (await claim()) as [NonNullable<Awaited<ReturnType<typeof claim>>[number]>];
      await insert(aliceDb, 3); // while the attempt is under way
      await fanOut();
      await store.webhooks.deliveries.recordDelivered(attempt, {
        status: 204,
        now: Date.now(),
        rule: AT_ONCE,
        endpointFailing: false,
      });
      const all = await store.webhooks.deliveries.list({ limit: 10 });
      assert.deepEqual(
        all.map((d) => [d.state, d.changes, d.id === attempt.id]),
        [
          ['pending', 3, false],
          ['delivered', 2, true],
        ],
      );
      assert.equal(all[1]?.messageId, attempt.messageId, 'the delivered one keeps the id it was sent under');
    });

    test('a failed attempt is retried later under a new message id once changes joined it; the endpoint is failing', async () => {
      const { endpoint, attempt, now } = await firstAttempt();
      // Under way, nothing failed yet: neither retrying nor among the failed (`webhooks deliveries --failed`).
      assert.equal((await store.webhooks.deliveries.list({ limit: 1 }))[0]?.state, 'pending');
      assert.deepEqual(await store.webhooks.deliveries.list({ limit: 10, failed: true }), []);
      const failing = await store.webhooks.deliveries.recordFailure(attempt, {
        status: 503,
        error: 'HTTP 503',
        now,
        retryAt: now + 5000,
      });
      assert.deepEqual(failing, { failingSince: now });
      assert.equal((await store.webhooks.endpoints.find(endpoint.id))?.failingSince, now);
      assert.deepEqual(await claim(store, now + 4000), [], 'not due before its retry');
      let [retrying] = await store.webhooks.deliveries.list({ limit: 1 });
      assert.equal(retrying?.state, 'retrying');
      assert.equal((await store.webhooks.deliveries.list({ limit: 10, failed: true }))[0]?.id, attempt.id);
      assert.equal(retrying?.messageId, attempt.messageId, 'a retry of the same signal keeps its message id');
      await insert(aliceDb);
      await fanOut();
      [retrying] = await store.webhooks.deliveries.list({ limit: 10 });
      assert.equal(retrying?.id, attempt.id, 'the new change joined the failing delivery, not a new one');
      assert.equal(retrying?.changes, 2);
      assert.notEqual(retrying?.messageId, attempt.messageId, 'joined after an attempt: a new message id');
      const [next] = (await claim(store, now + 6000)) as [
        NonNullable<Awaited<ReturnType<typeof claim>>[number]>,
      ];
      assert.equal(next.attempt, 2);
      await store.webhooks.deliveries.recordDelivered(next, {
        status: 200,
        now: now + 6000,
        rule: AT_ONCE,
        endpointFailing: true,
      });
      assert.equal(
        (await store.webhooks.endpoints.find(endpoint.id))?.failingSince,
        null,
        'it succeeded: not failing',
      );
      // The last attempt's failure, or an outcome recorded under a lease that is no longer its, change nothing.
      assert.equal(
        await store.webhooks.deliveries.recordFailure(attempt, {
          status: 500,
          error: 'late',
          now,
          retryAt: null,
        }),
        undefined,
      );
    });

    test('a retried delivery is due at once; a finished one only while no other of its endpoint and user is pending', async () => {
      const { endpoint, attempt, now } = await firstAttempt();
      await store.webhooks.deliveries.recordFailure(attempt, {
        status: 500,
        error: 'HTTP 500',
        now,
        retryAt: null,
      });
      assert.equal((await store.webhooks.deliveries.find(attempt.id))?.state, 'failed');
      const retried = await store.webhooks.deliveries.retry(attempt.id);
      assert.equal(retried?.state, 'pending');
      assert.equal(retried?.attempts, 0);
      assert.equal(retried?.messageId, attempt.messageId);
      assert.equal(await store.webhooks.deliveries.retry('msg_none'), undefined);
      await store.webhooks.endpoints.setDisabled(endpoint.id, { at: now, reason: 'test' });
      await assert.rejects(store.webhooks.deliveries.retry(attempt.id), /is disabled: enable it first/);
      assert.deepEqual(await claim(store, Date.now() + 1000), [], 'a disabled endpoint’s deliveries wait');
      await store.webhooks.endpoints.setDisabled(endpoint.id, null);
      assert.equal((await claim(store, Date.now() + 1000)).length, 1, 'enabled: they go');
    });

    test('a rotated secret signs beside the new one until its time is up', async () => {
      const { endpoint, secret } = await store.webhooks.endpoints.add({
        appId: appOne.id,
        url: 'https://one.example/',
      });
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual((await store.webhooks.endpoints.targets([endpoint.id]))[0]?.secrets, [secret]);
      const rotated = await store.webhooks.endpoints.rotateSecret(endpoint.id, 200);
      assert.ok(rotated && rotated.secret !== secret);
      assert.ok(rotated.endpoint.previousSecretUntil !== null);
      assert.deepEqual((await store.webhooks.endpoints.targets([endpoint.id]))[0]?.secrets, [
        rotated.secret,
        secret,
      ]);
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.deepEqual((await store.webhooks.endpoints.targets([endpoint.id]))[0]?.secrets, [rotated.secret]);
      assert.equal(await store.webhooks.endpoints.rotateSecret('ep_none', 1), undefined);
      assert.equal((await store.webhooks.endpoints.remove(endpoint.id))?.id, endpoint.id);
      assert.deepEqual(await store.webhooks.endpoints.targets([endpoint.id]), []);
    });
  });
}
