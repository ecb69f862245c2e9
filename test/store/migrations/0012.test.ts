// Migration 0012 on a store that keeps sign-ins from before it: each session (the server's own and the
// authorization server's) and each interaction that signed in or began signed in takes the user it signs in,
// so that a change of that user's password ends it; records of other kinds, and interactions of no one, are
// left as they were.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Store } from '../../../src/store/index.ts';
import { DIALECTS, openTestStore } from '../../helpers/dialects.ts';
import { rewindStore } from '../../helpers/stores.ts';

/** A record as the store kept it before 0012 (its user_id goes with the column). */
const kept = (payload: object) => ({
  payload: JSON.stringify(payload),
  grantId: null,
  uid: null,
  userCode: null,
  userId: null,
  expiresAt: null,
});

const RECORDS = (ann: string, bob: string): [model: string, id: string, payload: object][] => [
  ['WebSession', 'ann-web', { userId: ann }],
  ['Session', 'ann-provider', { accountId: ann, loginTs: 1, uid: 'u1' }],
  ['Interaction', 'ann-resumed', { session: { accountId: ann, uid: 'u1' }, prompt: { name: 'consent' } }],
  ['Interaction', 'bob-signed-in', { result: { login: { accountId: bob } }, prompt: { name: 'login' } }],
  ['Interaction', 'no-one', { prompt: { name: 'login' } }],
  ['Session', 'not-signed-in', { uid: 'u2' }],
  ['AuthorizationCode', 'ann-code', { accountId: ann, grantId: 'g1' }],
];

async function live(store: Store, ann: string, bob: string): Promise<string[]> {
  const found: string[] = [];
  for (const [model, id] of RECORDS(ann, bob)) {
    if (await store.oauth.records.find(model, 'id', id)) found.push(id);
  }
  return found;
}

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0012 on ${dialect}`, { skip }, () => {
    test("names the user of each sign-in kept before it, which that user's password change then ends", async () => {
      const t = await openTestStore(dialect);
      try {
        const ann = (await t.store.accounts.addUser({ login: 'ann' })).id;
        const bob = (await t.store.accounts.addUser({ login: 'bob' })).id;
        for (const [model, id, payload] of RECORDS(ann, bob)) {
          await t.store.oauth.records.save(model, id, kept(payload));
        }
        // The store as it was before 0012: the column goes, and the migration runs on the next opening.
        await rewindStore(t.url, '0012');
        const store = await t.reopen();
        const all = RECORDS(ann, bob).map(([, id]) => id);
        assert.deepEqual(await live(store, ann, bob), all);
        await store.accounts.setPasswordHash(ann, '$scrypt$new');
        assert.deepEqual(await live(store, ann, bob), [
          'bob-signed-in',
          'no-one',
          'not-signed-in',
          'ann-code',
        ]);
        await store.accounts.setPasswordHash(bob, '$scrypt$new');
        assert.deepEqual(await live(store, ann, bob), ['no-one', 'not-signed-in', 'ann-code']);
      } finally {
        await t.close();
      }
    });
  });
}
