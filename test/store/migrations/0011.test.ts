// Migration 0011 on a store that holds games: each database's game_count is filled with the number of its
// live games (deleted games, another database's and a deleted database's not counted), and from then on the
// store's writes keep it equal to a count of the games.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Store } from '../../../src/store/index.ts';
import { DIALECTS, openTestStore, record } from '../../helpers/dialects.ts';
import { queryStore, rewindStore } from '../../helpers/stores.ts';

/** Every database's kept count beside a count of its live games, by slug. */
async function counts(url: string): Promise<Record<string, [kept: number, counted: number]>> {
  const rows = await queryStore<{ slug: string; kept: number; counted: number }>(
    url,
    `select slug, game_count as kept,
       (select count(*) from games where games.database_id = databases.id and games.deleted = 0) as counted
     from databases order by slug`,
  );
  return Object.fromEntries(rows.map((row) => [row.slug, [Number(row.kept), Number(row.counted)]]));
}

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0011 on ${dialect}`, { skip }, () => {
    test('fills each database’s count of live games; the writes then keep it', async () => {
      const t = await openTestStore(dialect);
      try {
        const owner = await t.store.accounts.addUser({ login: 'pat' });
        const other = await t.store.accounts.addUser({ login: 'sam' });
        const one = await t.store.databases.add({ ownerId: owner.id, name: 'One' });
        const two = await t.store.databases.add({ ownerId: owner.id, name: 'Two' });
        const gone = await t.store.databases.add({ ownerId: owner.id, name: 'Gone' });
        const sams = await t.store.databases.add({ ownerId: other.id, name: 'Sams' });
        const games = (n: number, from: number) => Array.from({ length: n }, (_, i) => record(from + i));
        const inOne = await t.store.games.insert(one, games(5, 0));
        await t.store.games.insert(two, games(2, 10));
        await t.store.games.insert(gone, games(3, 20));
        await t.store.games.insert(sams, games(4, 30));
        await t.store.games.delete(inOne.ids[0] as string);
        await t.store.games.move(inOne.ids[1] as string, two);
        await t.store.databases.delete(gone);
        const expected = { gone: [0, 0], one: [3, 3], sams: [4, 4], two: [3, 3] };
        assert.deepEqual(await counts(t.url), expected, 'kept by the writes');

        // The store as it was before 0011: the column is dropped and the migration runs on the next opening.
        await rewindStore(t.url, '0011');
        const reopened: Store = await t.reopen();
        assert.deepEqual(await counts(t.url), expected, 'filled by the migration');
        assert.equal(await reopened.games.total(owner.id), 6);
        assert.equal(await reopened.games.total(other.id), 4);
        const listed = await reopened.databases.list(owner.id);
        assert.deepEqual(Object.fromEntries(listed.map((d) => [d.slug, d.gameCount])), { one: 3, two: 3 });
      } finally {
        await t.close();
      }
    });
  });
}
