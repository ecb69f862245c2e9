// The store's OAuth parts on both dialects: apps as clients, password hashes, grants and what revoking one
// revokes, access tokens under a grant, and the authorization server's records (kept by the SHA-256 of their
// ids, used once, gone when expired).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashToken, type Store } from '../../src/store/index.ts';
import type { User } from '../../src/store/types.ts';
import { DIALECTS, openTestStore, type TestStore } from '../helpers/dialects.ts';
import { storeText } from '../helpers/stores.ts';

for (const { dialect, skip } of DIALECTS) {
  describe(`OAuth in the store on ${dialect}`, { skip }, () => {
    let t: TestStore;
    let store: Store;
    let ann: User;

    before(async () => {
      t = await openTestStore(dialect);
      store = t.store;
      ann = await store.accounts.addUser({ login: 'ann' });
    });
    after(async () => {
      await t?.close();
    });

    const record = (grantId: string | null, expiresAt: number | null = null) => ({
      payload: JSON.stringify({ grantId }),
      grantId,
      uid: null,
      userCode: null,
      userId: null,
      expiresAt,
    });

    test('apps: a client with its redirect URIs, type and device flow; the secret only as its hash', async () => {
      const plain = await store.accounts.addApp({ name: 'plain' });
      assert.equal(plain.oauth, null);
      const client = {
        type: 'confidential' as const,
        redirectUris: ['https://a.example/cb'],
        deviceFlow: false,
      };
      const web = await store.accounts.addApp({
        name: 'web',
        oauth: client,
        clientSecretHash: hashToken('s3cret'),
      });
      assert.deepEqual((await store.accounts.findApp('web'))?.oauth, client);
      assert.equal((await store.accounts.findAppById(web.id))?.secretHash, hashToken('s3cret'));
      await store.accounts.setAppClient(web.id, { ...client, redirectUris: ['https://b.example/cb'] });
      assert.deepEqual((await store.accounts.findApp('web'))?.oauth?.redirectUris, ['https://b.example/cb']);
      assert.equal(
        (await store.accounts.findAppById(web.id))?.secretHash,
        hashToken('s3cret'),
        'the secret stays',
      );
      await store.accounts.setAppClient(plain.id, { type: 'public', redirectUris: [], deviceFlow: true });
      assert.deepEqual((await store.accounts.findApp('plain'))?.oauth, {
        type: 'public',
        redirectUris: [],
        deviceFlow: true,
      });
      assert.equal((await store.accounts.findAppById(plain.id))?.secretHash, null);
    });

    test('password hashes: set, found with the user, removed', async () => {
      assert.equal((await store.accounts.findPasswordHash('ann'))?.hash, null);
      await store.accounts.setPasswordHash(ann.id, '$scrypt$x');
      const found = await store.accounts.findPasswordHash('ann');
      assert.equal(found?.hash, '$scrypt$x');
      assert.deepEqual(found?.user, ann);
      assert.equal(await store.accounts.findPasswordHash('nobody'), undefined);
      await store.accounts.setPasswordHash(ann.id, null);
    });

    test("a password set or removed ends the user's sign-in records, and no one else's", async () => {
      const bob = await store.accounts.addUser({ login: 'bob' });
      const signIn = (userId: string) => ({ ...record(null), userId });
      await store.oauth.records.save('WebSession', 'ann-web', signIn(ann.id));
      await store.oauth.records.save('Session', 'ann-provider', signIn(ann.id));
      await store.oauth.records.save('Interaction', 'ann-interaction', signIn(ann.id));
      await store.oauth.records.save('WebSession', 'bob-web', signIn(bob.id));
      await store.oauth.records.save('AuthorizationCode', 'ann-code', record('g-ann'));
      const live = async () => {
        const found: string[] = [];
        for (const [model, id] of [
          ['WebSession', 'ann-web'],
          ['Session', 'ann-provider'],
          ['Interaction', 'ann-interaction'],
          ['WebSession', 'bob-web'],
          ['AuthorizationCode', 'ann-code'],
        ] as const) {
          if (await store.oauth.records.find(model, 'id', id)) found.push(id);
        }
        return found;
      };
      assert.equal((await live()).length, 5);
      await store.accounts.setPasswordHash(ann.id, '$scrypt$new');
      assert.deepEqual(await live(), ['bob-web', 'ann-code']);
      await store.accounts.setPasswordHash(bob.id, null);
      assert.deepEqual(await live(), ['ann-code']);
    });

    test('a grant, its tokens and records: revoking it revokes them all at once', async () => {
      const app = await store.accounts.addApp({ name: 'granted' });
      const grant = { id: 'g1', userId: ann.id, appId: app.id, scopes: ['games.read'], payload: '{}' };
      assert.equal(await store.oauth.grants.save(grant), true);
      assert.deepEqual((await store.oauth.grants.active(app.id, ann.id))?.scopes, ['games.read']);
      assert.equal(await store.oauth.grants.save({ ...grant, scopes: ['games.read', 'user.read'] }), true);
      assert.deepEqual((await store.oauth.grants.find('g1'))?.grant.scopes, ['games.read', 'user.read']);
      const token = { userId: ann.id, appId: app.id, scopes: ['games.read'], expiresAt: null, grantId: 'g1' };
      assert.equal(await store.oauth.grants.addToken({ ...token, token: 'at-1', createdAt: 1 }), true);
      assert.equal((await store.tokens.findByHash(hashToken('at-1')))?.grantId, 'g1');
      assert.ok((await store.oauth.grants.find('g1'))?.grant.lastUsedAt, 'a token issued is a use');
      await store.oauth.records.save('RefreshToken', 'rt-1', record('g1'));

      const revoked = await store.oauth.grants.revoke('g1', 'someone else');
      assert.equal(revoked, undefined, 'only its user, or the operator, revokes it');
      const done = await store.oauth.grants.revoke('g1', ann.id);
      assert.ok(done?.revokedAt);
      assert.ok((await store.tokens.findByHash(hashToken('at-1')))?.revokedAt);
      assert.equal(await store.oauth.records.find('RefreshToken', 'id', 'rt-1'), undefined);
      assert.equal(await store.oauth.grants.find('g1'), undefined);
      assert.equal(await store.oauth.grants.active(app.id, ann.id), undefined);
      // A revoked grant takes no more tokens, and a late save does not bring it back.
      assert.equal(await store.oauth.grants.addToken({ ...token, token: 'at-2', createdAt: 2 }), false);
      assert.equal(await store.tokens.findByHash(hashToken('at-2')), undefined);
      assert.equal(await store.oauth.grants.save(grant), false);
      assert.equal(
        (await store.oauth.grants.list(ann.id)).find((g) => g.id === 'g1')?.revokedAt,
        done?.revokedAt,
      );
    });

    test('records: found by id, uid or user code; consumed exactly once; never past their expiry', async () => {
      await store.oauth.records.save('Session', 'session-id', { ...record(null), uid: 'uid-1' });
      assert.ok(await store.oauth.records.find('Session', 'uid', 'uid-1'));
      await store.oauth.records.save('DeviceCode', 'device-code', {
        ...record(null),
        userCode: 'ABCDEFGH',
      });
      assert.ok(await store.oauth.records.find('DeviceCode', 'user_code', 'ABCDEFGH'));
      assert.equal(await store.oauth.records.find('Session', 'id', 'device-code'), undefined, 'by model');

      await store.oauth.records.save('AuthorizationCode', 'code-1', record(null));
      const other = await t.reopen();
      const raced = await Promise.all([
        store.oauth.records.consume('AuthorizationCode', 'code-1'),
        other.oauth.records.consume('AuthorizationCode', 'code-1'),
      ]);
      assert.deepEqual(raced.sort(), [false, true]);
      assert.ok((await store.oauth.records.find('AuthorizationCode', 'id', 'code-1'))?.consumedAt);
      // Saved again (the provider updates a record), it stays consumed.
      await store.oauth.records.save('AuthorizationCode', 'code-1', record(null));
      assert.ok((await store.oauth.records.find('AuthorizationCode', 'id', 'code-1'))?.consumedAt);

      await store.oauth.records.save('AuthorizationCode', 'old', record(null, Date.now() - 1));
      assert.equal(await store.oauth.records.find('AuthorizationCode', 'id', 'old'), undefined);
      assert.ok((await store.oauth.records.deleteExpired()) >= 1);

      const text = await storeText(t.url);
      for (const id of ['session-id', 'device-code', 'code-1', 'ABCDEFGH']) assert.ok(!text.includes(id), id);
    });

    test('look-ups by a value holding NUL find nothing, on PostgreSQL too (which refuses such text)', async () => {
      const nul = 'a\u0000b';
      assert.equal(await store.accounts.findAppById(nul), undefined);
      assert.equal(await store.accounts.findApp(nul), undefined);
      assert.equal(await store.accounts.findPasswordHash(nul), undefined);
      assert.equal(await store.accounts.findUser(nul), undefined);
      assert.equal(await store.accounts.getUserById(nul), undefined);
      assert.equal(await store.oauth.grants.find(nul), undefined);
      assert.equal(await store.oauth.grants.revoke(nul, ann.id), undefined);
      assert.equal(await store.oauth.grants.revoke(nul), undefined);
      for (const by of ['id', 'uid', 'user_code'] as const) {
        assert.equal(await store.oauth.records.find('Interaction', by, nul), undefined, by);
      }
    });
  });
}
