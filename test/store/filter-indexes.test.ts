// Each filter of the game lists is served by an index (migration 0015, store/game-filter.ts): the plan of a
// filtered page, the statement GameReads.listFiltered runs, reads one of the filter indexes (updatedSince:
// the list from the first game made since, and 0016's games_owner_changed) and never scans the games table,
// on SQLite and on PostgreSQL (after ANALYZE, on a few thousand games of two users, where a scan would be
// cheap enough to be chosen if no index served the filter).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, type Kysely } from 'kysely';
import type { GameFilter } from '../../src/store/game-filter.ts';
import type { Store } from '../../src/store/index.ts';
import type { DB } from '../../src/store/schema.ts';
import { DIALECTS, openTestStore, record, type TestStore } from '../helpers/dialects.ts';

/** The common filters and the index each must use. */
const CASES: { filter: GameFilter; index: RegExp }[] = [
  { filter: { player: 'White 17' }, index: /games_owner_white_name|games_owner_black_name/ },
  { filter: { player: 'White 17', color: 'white' }, index: /games_owner_white_name/ },
  { filter: { fideId: '1000017', color: 'black' }, index: /games_owner_black_fide_id/ },
  { filter: { fideId: '1000017' }, index: /games_owner_(white|black)_fide_id/ },
  { filter: { event: 'Event 17' }, index: /games_owner_event/ },
  { filter: { eco: 'B9' }, index: /games_owner_eco/ },
  { filter: { eco: 'B90' }, index: /games_owner_eco/ },
  { filter: { dateFrom: '2024-05-01', dateTo: '2024-05-03' }, index: /games_owner_date/ },
];

/** The query plan of a filtered page as text: the statement GameReads.listFiltered runs. */
async function plan(store: Store, dialect: string, ownerId: string, filter: GameFilter): Promise<string> {
  const db = store.db as Kysely<DB>;
  const split =
    filter.afterSeq === undefined ? undefined : await store.games.changedSplit(ownerId, filter.afterSeq);
  // An owner without tombstones (alice, bob) has the page's pks read on the filter indexes alone (pageByPk).
  const statement =
    split === undefined
      ? store.games.pageByPk({ ownerId, filter }, { limit: 51, offset: 0 })
      : store.games.filteredPage({ ownerId, filter }, { limit: 51, offset: 0 }, split);
  const { sql, parameters } = statement.compile();
  const explain = dialect === 'postgres' ? 'explain ' : 'explain query plan ';
  const result = await db.executeQuery(CompiledQuery.raw(explain + sql, [...parameters]));
  return result.rows.map((row) => Object.values(row as Record<string, unknown>).join(' ')).join('\n');
}

for (const { dialect, skip } of DIALECTS) {
  describe(`the filters' indexes on ${dialect}`, { skip }, () => {
    let t: TestStore;
    let aliceId: string;
    before(async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      for (const login of ['alice', 'bob']) {
        const user = await store.accounts.addUser({ login });
        if (login === 'alice') aliceId = user.id;
        const database = await store.databases.add({ ownerId: user.id, name: 'Games' });
        const games = Array.from({ length: 3000 }, (_, i) => {
          const n = i % 400;
          return record(i + (login === 'bob' ? 10_000 : 0), {
            event: `Event ${n % 50}`,
            date: `2024-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
            eco: `${'ABCDE'[i % 5]}${String(i % 100).padStart(2, '0')}`,
            result: ['1-0', '0-1', '1/2-1/2', '*'][i % 4] as string,
            white: { name: `White ${n}`, elo: null, fideId: String(1_000_000 + n), country: null },
            black: { name: `Black ${n}`, elo: null, fideId: String(2_000_000 + n), country: null },
          });
        });
        await store.games.insert(database, games);
      }
      await t.store.db.executeQuery(CompiledQuery.raw('analyze'));
    });
    after(async () => t?.close());

    test('a player without a colour and a two-character ECO prefix: each part in list order, merged, never all matches sorted', {
      skip: dialect === 'postgres' ? false : 'PostgreSQL names the merge in its plan',
    }, async () => {
      for (const filter of [{ player: 'White 17' }, { eco: 'B9' }, { fideId: '1000017', eco: 'A1' }]) {
        const text = await plan(t.store, dialect, aliceId, filter);
        assert.match(text, /Merge Append/, text);
        assert.doesNotMatch(text, /Bitmap|Seq Scan/, text);
      }
    });

    test('updatedSince: the games made since walked in list order from the first of them, those changed since on games_owner_changed; every page as the filter applied here', async () => {
      const { store } = t;
      const db = store.db as Kysely<DB>;
      const user = await store.accounts.addUser({ login: 'dave' });
      const games = await store.databases.add({ ownerId: user.id, name: 'Games' });
      const other = await store.databases.add({ ownerId: user.id, name: 'Other' });
      const made = (from: number, n: number) =>
        Array.from({ length: n }, (_, i) => record(30_000 + from + i));
      await store.games.insert(games, made(0, 2000));
      const afterSeq = await store.games.version(user.id);
      // A change time after the position's (the store's clock has milliseconds).
      await new Promise((resolve) => setTimeout(resolve, 5));
      const old = await store.games.list(user.id, { limit: 2000, offset: 0 });
      const idAt = (i: number) => (old[i] as { id: string }).id;
      // Made before and changed since: updated, moved, deleted; then games made since, one of them changed.
      await store.games.update(idAt(10), record(39_010));
      await store.games.update(idAt(1500), record(39_500));
      await store.games.move(idAt(700), other);
      await store.games.delete(idAt(20));
      await store.games.insert(games, made(2000, 300));
      const newest = await store.games.list(user.id, { limit: 1, offset: 1998 });
      await store.games.delete((newest[0] as { id: string }).id);
      await store.games.update(idAt(1999), record(39_999));
      await db.executeQuery(CompiledQuery.raw('analyze'));

      const expected = (
        await db
          .selectFrom('games')
          .select('pk')
          .where('owner_id', '=', user.id)
          .where('deleted', '=', 0)
          .where('seq', '>', afterSeq)
          .orderBy('pk')
          .execute()
      ).map((row) => Number(row.pk));
      assert.equal(expected.length, 4 + 299);
      const scope = { ownerId: user.id, filter: { afterSeq } };
      for (const [offset, limit] of [
        [0, 51],
        [0, 2],
        [3, 10],
        [290, 50],
        [400, 10],
      ] as const) {
        const page = await store.games.listFiltered(scope, { limit, offset });
        assert.deepEqual(
          page.map((game) => game.position),
          expected.slice(offset, offset + limit),
          `offset ${offset}`,
        );
      }
      const after = expected[1] as number;
      const next = await store.games.listFiltered(scope, { limit: 5, offset: 0, after });
      assert.deepEqual(
        next.map((game) => game.position),
        expected.slice(2, 7),
      );
      assert.equal(await store.games.countFiltered(scope), expected.length);

      const split = await store.games.changedSplit(user.id, afterSeq);
      assert.ok(split, 'games changed after the position');
      assert.equal(split.sorted, true);
      const text = await plan(store, dialect, user.id, { afterSeq });
      assert.match(text, /games_owner_changed/, text);
      assert.doesNotMatch(text, /Seq Scan|SCAN games(?! USING)/, text);
      // Nothing changed after the newest change: no split, an empty page.
      const head = await store.games.version(user.id);
      assert.equal(await store.games.changedSplit(user.id, head), undefined);
      assert.deepEqual(
        await store.games.listFiltered(
          { ownerId: user.id, filter: { afterSeq: head } },
          { limit: 5, offset: 0 },
        ),
        [],
      );
    });

    test('an owner without tombstones: the page by pks on the filter indexes is the page read on the rows', async () => {
      const filters: GameFilter[] = [
        { player: 'White 17' },
        { player: 'White 17', color: 'white' },
        { fideId: '2000017' },
        { event: 'Event 17' },
        { eco: 'B9' },
        { eco: 'B91' },
        { result: '1/2-1/2' },
        { dateFrom: '2024-05-01', dateTo: '2024-05-03' },
        { result: '0-1', eco: 'B' },
      ];
      for (const filter of filters) {
        for (const page of [
          { limit: 51, offset: 0 },
          { limit: 7, offset: 5 },
          { limit: 51, offset: 300 },
          { limit: 10, offset: 0, after: 1500 },
        ]) {
          const scope = { ownerId: aliceId, filter };
          const byPk = await t.store.games.pageByPk(scope, page).execute();
          const onRows = await t.store.games.filteredPage(scope, page).execute();
          assert.deepEqual(byPk, onRows, `${JSON.stringify(filter)} ${JSON.stringify(page)}`);
          if (page.offset === 0 && !page.after) assert.ok(onRows.length > 0, JSON.stringify(filter));
        }
      }
    });

    test("a player without a colour is counted on both sides' indexes: a game on both sides once, tombstones left out, bounded", async () => {
      const { store } = t;
      const user = await store.accounts.addUser({ login: 'carol' });
      const database = await store.databases.add({ ownerId: user.id, name: 'Games' });
      // Twelve games: Carlsen white in 0-4, black in 3-7 (3 and 4 on both sides), neither in 8-11.
      const games = Array.from({ length: 12 }, (_, i) =>
        record(20_000 + i, {
          white: {
            name: i <= 4 ? 'Carlsen' : `W ${i}`,
            elo: null,
            fideId: i <= 4 ? '1503014' : null,
            country: null,
          },
          black: { name: i >= 3 && i <= 7 ? 'Carlsen' : `B ${i}`, elo: null, fideId: null, country: null },
        }),
      );
      await store.games.insert(database, games);
      const listed = await store.games.list(user.id, { limit: 100, offset: 0 });
      // Deleted: one game on both sides (3), one white (0), one black (7), one of neither (9).
      for (const i of [3, 0, 7, 9]) await store.games.delete((listed[i] as { id: string }).id);
      const scope = { ownerId: user.id, filter: { player: 'Carlsen' } };
      assert.equal(await store.games.countFiltered(scope), 5);
      for (const [upTo, expected] of [
        [10, 5],
        [5, 5],
        [4, 5],
        [2, 3],
        [0, 1],
      ] as const) {
        const counted = await store.games.countFiltered(scope, upTo);
        assert.equal(Math.min(counted, upTo + 1), expected, `upTo ${upTo}: ${counted}`);
      }
      assert.equal(await store.games.countFiltered({ ownerId: user.id, filter: { fideId: '1503014' } }), 3);
      const page = await store.games.listFiltered(scope, { limit: 10, offset: 0 });
      assert.deepEqual(
        page.map((game) => game.id),
        [1, 2, 4, 5, 6].map((i) => (listed[i] as { id: string }).id),
      );
    });

    for (const { filter, index } of CASES) {
      test(`${JSON.stringify(filter)}: on an index, no scan of the games`, async () => {
        const text = await plan(t.store, dialect, aliceId, filter);
        assert.match(text, index, text);
        assert.doesNotMatch(text, /Seq Scan|SCAN games(?! USING)/, text);
      });
    }
  });
}
