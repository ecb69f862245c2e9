// The Store interface, called directly, behaves the same on SQLite and on PostgreSQL: every query of the
// service, checked for its results, order, paging, dedup, limits and the change feed's sequence and times.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { hashToken, type Store, StoreError } from '../../src/store/index.ts';
import type { Database, GameChange, User } from '../../src/store/types.ts';
import { DIALECTS, openTestStore, record, type TestStore } from '../helpers/dialects.ts';
import { queryStore } from '../helpers/stores.ts';

/** Code-point order, which is what both dialects must sort text by (SQLite's BINARY, PostgreSQL's "C"). */
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function allChanges(store: Store, ownerId: string, after = 0, limit = 3): Promise<GameChange[]> {
  const out: GameChange[] = [];
  for (let cursor = after; ; ) {
    const page = await store.feed.changes(ownerId, cursor, limit);
    out.push(...page);
    if (page.length < limit) return out;
    cursor = (page.at(-1) as GameChange).seq;
  }
}

for (const { dialect, skip } of DIALECTS) {
  describe(`the store on ${dialect}`, { skip }, () => {
    let t: TestStore;
    let store: Store;
    let alice: User;
    let bob: User;

    before(async () => {
      t = await openTestStore(dialect);
      store = t.store;
      alice = await store.accounts.addUser({ login: 'alice', name: 'Alice', email: 'a@example.org' });
      bob = await store.accounts.addUser({ login: 'bob' });
    });
    after(async () => {
      await t?.close();
    });

    test('users: add, find by login and id, no duplicate login, listed by creation then login', async () => {
      assert.deepEqual(await store.accounts.findUser('alice'), alice);
      assert.deepEqual(await store.accounts.getUserById(alice.id), alice);
      assert.equal(await store.accounts.findUser('nobody'), undefined);
      assert.equal(await store.accounts.findUser('ALICE'), undefined, 'logins are case-sensitive');
      await assert.rejects(store.accounts.addUser({ login: 'alice' }), StoreError);
      const logins = ['émile', 'Zed', 'Émile', 'zed', 'adam'];
      for (const login of logins) await store.accounts.addUser({ login });
      // Same creation time: the order is the login's, by code point on both dialects (not a locale's).
      await store.db.updateTable('users').set({ created_at: 1 }).where('login', 'in', logins).execute();
      const listed = (await store.accounts.listUsers()).map((u) => u.login);
      assert.deepEqual(listed.slice(0, logins.length), [...logins].sort(byCodePoint));
      assert.deepEqual(listed.slice(logins.length), ['alice', 'bob']);
    });

    test('apps: own sector by default, a shared one on request, listed by creation then name', async () => {
      const one = await store.accounts.addApp({ name: 'one' });
      const two = await store.accounts.addApp({ name: 'Two', sector: 'shared' });
      assert.equal(one.sector, one.id);
      assert.equal(two.sector, 'shared');
      assert.deepEqual(await store.accounts.findApp('Two'), two);
      await assert.rejects(store.accounts.addApp({ name: 'one' }), StoreError);
      await store.db.updateTable('apps').set({ created_at: 1 }).execute();
      assert.deepEqual(
        (await store.accounts.listApps()).map((a) => a.name),
        ['Two', 'one'],
      );
    });

    test('a user or app added by another process between the lookup and the insert: "already exists"', async () => {
      // As if the other process inserted after this one looked: the lookups find nothing, the index refuses.
      const late = Object.create(store, {
        findUser: { value: async () => undefined },
        findApp: { value: async () => undefined },
      }) as Store;
      const exists = (what: string) => (error: unknown) =>
        error instanceof StoreError && error.message === `${what} already exists`;
      await assert.rejects(late.accounts.addUser({ login: 'alice' }), exists('user "alice"'));
      await assert.rejects(late.accounts.addApp({ name: 'one' }), exists('app "one"'));
    });

    test('tokens: only the hash is kept; found by hash; revoked by id or by the token itself', async () => {
      const app = await store.accounts.addApp({ name: 'token-app' });
      const issue = () =>
        store.tokens.issue({
          userId: alice.id,
          appId: app.id,
          scopes: ['games.read', 'user.read'],
          expiresAt: 5,
        });
      const first = await issue();
      const second = await issue();
      assert.match(first.token, /^cp_[A-Za-z0-9_-]{43}$/);
      const found = await store.tokens.findByHash(hashToken(first.token));
      assert.ok(found);
      assert.deepEqual(
        { ...found, createdAt: 0 },
        {
          id: first.id,
          userId: alice.id,
          userLogin: 'alice',
          appId: app.id,
          appName: 'token-app',
          appSector: app.sector,
          scopes: ['games.read', 'user.read'],
          expiresAt: 5,
          revokedAt: null,
          createdAt: 0,
          grantId: null,
          description: null,
          lastUsedAt: null,
        },
      );
      assert.equal(await store.tokens.findByHash(hashToken('cp_unknown')), undefined);
      assert.ok((await store.tokens.revoke(first.id))?.revokedAt);
      assert.ok((await store.tokens.revoke(second.token))?.revokedAt);
      assert.equal(await store.tokens.revoke('neither'), undefined);
      const listed = (await store.tokens.list()).filter((x) => x.appId === app.id);
      assert.equal(listed.length, 2);
      assert.ok(listed.every((x) => x.revokedAt !== null));
    });

    test('databases: slugs unique per owner (-2, -3), found by id, slug or name, listed by creation then id', async () => {
      const a = await store.databases.add({ ownerId: alice.id, name: 'Café Games' });
      const b = await store.databases.add({
        ownerId: alice.id,
        name: 'Cafe games',
        private: true,
        maxGames: 3,
      });
      const c = await store.databases.add({ ownerId: alice.id, name: 'CAFE GAMES' });
      const other = await store.databases.add({ ownerId: bob.id, name: 'Café Games' });
      assert.deepEqual(
        [a.slug, b.slug, c.slug, other.slug],
        ['cafe-games', 'cafe-games-2', 'cafe-games-3', 'cafe-games'],
      );
      assert.equal(b.private, true);
      assert.equal(b.maxGames, 3);
      assert.deepEqual(await store.databases.find(alice.id, a.id), a);
      assert.deepEqual(await store.databases.find(alice.id, 'cafe-games-2'), b);
      assert.deepEqual(await store.databases.findByRef(alice.id, 'CAFE GAMES'), [c]);
      assert.equal(await store.databases.find(alice.id, other.id), undefined, "another owner's database");
      assert.equal(await store.databases.find(alice.id, 'cafe\u0000games'), undefined, 'NUL finds nothing');
      // Creation order; databases made in the same millisecond follow their ids, by code point.
      const byCreation = [a, b, c].sort((x, y) => x.createdAt - y.createdAt || byCodePoint(x.id, y.id));
      assert.deepEqual(
        (await store.databases.list(alice.id)).map((d) => d.id),
        byCreation.map((d) => d.id),
      );
      await store.db
        .updateTable('databases')
        .set({ created_at: 1 })
        .where('owner_id', '=', alice.id)
        .execute();
      assert.deepEqual(
        (await store.databases.list(alice.id)).map((d) => d.id),
        [a.id, b.id, c.id].sort(byCodePoint),
      );
      assert.ok((await store.databases.list()).length >= 4);
      assert.equal(await store.databases.countGames(a.id), 0);
    });

    test('insertGames: duplicates skipped (in the store and within the batch) unless allowed; maxGames', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Dedup' });
      const first = await store.games.insert(db, [record(1), record(2), record(1)]);
      assert.deepEqual(
        { ...first, ids: first.ids.length },
        { inserted: 2, duplicates: 1, overLimit: 0, ids: 2 },
      );
      const again = await store.games.insert(db, [record(2), record(3)]);
      assert.deepEqual(
        { ...again, ids: again.ids.length },
        { inserted: 1, duplicates: 1, overLimit: 0, ids: 1 },
      );
      const allowed = await store.games.insert(db, [record(1)], true);
      assert.equal(allowed.inserted, 1);
      assert.equal(await store.databases.countGames(db.id), 4);

      const small = await store.databases.add({ ownerId: alice.id, name: 'Small', maxGames: 3 });
      const over = await store.games.insert(small, [record(10), record(11)]);
      assert.equal(over.inserted, 2);
      const full = await store.games.insert(small, [record(12), record(13), record(11)]);
      assert.deepEqual(
        { ...full, ids: full.ids.length },
        { inserted: 1, duplicates: 1, overLimit: 1, ids: 1 },
      );
      assert.equal(await store.databases.countGames(small.id), 3);
    });

    test('insertGames: games whose hashes share the dedup index prefix are told apart by the whole hash', async () => {
      // The dedup index keeps 12 characters of the hash (migration 0003): the rows it finds are candidates.
      const db = await store.databases.add({ ownerId: alice.id, name: 'Prefix' });
      const prefix = 'f'.repeat(40);
      const a = record(21, { contentHash: `${prefix}a` });
      const b = record(22, { contentHash: `${prefix}b` });
      assert.equal((await store.games.insert(db, [a])).inserted, 1);
      const next = await store.games.insert(db, [b, a]);
      assert.deepEqual(
        { inserted: next.inserted, duplicates: next.duplicates },
        { inserted: 1, duplicates: 1 },
      );
      // The same game in another database of the owner is no duplicate there.
      const other = await store.databases.add({ ownerId: alice.id, name: 'Prefix 2' });
      assert.equal((await store.games.insert(other, [a, b])).inserted, 2);
      assert.equal(await store.databases.countGames(db.id), 2);
    });

    test('the dedup lookup searches an index, never a whole database', async () => {
      if (dialect === 'sqlite') {
        // As sqlite/game-keys.ts and sqlite/game-insert.ts: the log rows of one database since the last read,
        // then the rows the keys found, by pk.
        const plans = [
          `select id, first_pk, keys from game_keys where database_id = 'x' and id > 5 order by id`,
          `select content_hash from games where pk in (select value from json_each('[1, 2]'))
            and database_id = 'x' and deleted = 0`,
        ];
        const [log, rows] = await Promise.all(
          plans.map(async (q) =>
            (await queryStore<{ detail: string }>(t.url, `explain query plan ${q}`))
              .map((p) => p.detail)
              .join('\n'),
          ),
        );
        assert.match(
          log as string,
          /SEARCH game_keys USING INDEX game_keys_database \(database_id=\? AND id>\?\)/,
        );
        assert.doesNotMatch(log as string, /TEMP B-TREE/);
        // A point lookup per pk: on the table itself or on (database_id, deleted, pk).
        assert.match(
          rows as string,
          /SEARCH games USING (INTEGER PRIMARY KEY \(rowid=\?\)|INDEX \w+ \(.*pk=\?\))/,
        );
        assert.doesNotMatch(rows as string, /SCAN games/);
        return;
      }
      const lookup = `select content_hash from games where dedup_key in ('abcdefgh0123456789ab', 'abcdefgh0123456789ac')
        and database_id = 'x' and deleted = 0`;
      // PostgreSQL picks by its statistics: a database of many games, analysed, where the lookup's few keys
      // are the narrower condition (as in an import into a large database; with few games any plan is cheap).
      const db = await store.databases.add({ ownerId: alice.id, name: 'Dedup plan' });
      await store.games.insert(
        db,
        Array.from({ length: 3000 }, (_, i) => record(50_000 + i)),
      );
      const client = new pg.Client(t.url);
      await client.connect();
      try {
        await client.query('analyze games');
        const plan = await client.query<{ 'QUERY PLAN': string }>(
          `explain ${lookup.replace("database_id = 'x'", `database_id = '${db.id}'`)}`,
        );
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(text, /games_dedup_key/);
        assert.match(text, /Index Cond: .*dedup_key/s);
      } finally {
        await client.end();
      }
    });

    test('insertGames: game ids are distinct RFC 9562 version 7 UUIDs, rising in import order', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Ids' });
      const ids: string[] = [];
      for (let batch = 0; batch < 3; batch++) {
        const games = Array.from({ length: 40 }, (_, i) => record(1000 + batch * 40 + i));
        ids.push(...(await store.games.insert(db, games)).ids);
        await new Promise((resolve) => setTimeout(resolve, 2)); // the next batch has a later millisecond
      }
      assert.equal(new Set(ids).size, 120);
      for (const id of ids)
        assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      // The first 48 bits are the time in ms: batches come out in order (ids within one ms are random).
      const ms = ids.map((id) => id.slice(0, 13));
      for (let i = 40; i < ids.length; i += 40)
        assert.ok((ms[i] as string) > (ms[i - 1] as string), `batch at ${i}`);
    });

    test('insertGames: games of one batch with the same players and year still get distinct slugs', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Slugs' });
      const same = { white: record(0).white, black: record(0).black, date: '2024-01-01' };
      await store.games.insert(
        db,
        Array.from({ length: 50 }, (_, i) => record(3000 + i, same)),
      );
      const slugs = (await store.games.listInDatabase(db.id, { limit: 50, offset: 0 })).map((g) => g.slug);
      assert.equal(new Set(slugs).size, 50);
      for (const slug of slugs) assert.match(slug, /^white-0-vs-black-0-2024-[0-9a-f]{12}$/);
    });

    test('lists: import order, stable paging with limit and offset, scoped by owner and database', async () => {
      const lists = await store.databases.add({ ownerId: bob.id, name: 'Lists' });
      const other = await store.databases.add({ ownerId: bob.id, name: 'Other' });
      const ids = (
        await store.games.insert(
          lists,
          [1, 2, 3, 4, 5].map((n) => record(100 + n)),
        )
      ).ids;
      const otherIds = (await store.games.insert(other, [record(200)])).ids;
      const moreIds = (await store.games.insert(lists, [record(106)])).ids;
      const inLists = [...ids, ...moreIds];
      const paged: string[] = [];
      for (let offset = 0; offset < 10; offset += 2) {
        paged.push(...(await store.games.listInDatabase(lists.id, { limit: 2, offset })).map((g) => g.id));
      }
      assert.deepEqual(paged, inLists);
      const everything = await store.games.list(bob.id, { limit: 200, offset: 0 });
      assert.deepEqual(
        everything.map((g) => g.id),
        [...ids, ...otherIds, ...moreIds],
      );
      const summary = everything[0];
      assert.deepEqual(summary, {
        id: ids[0],
        slug: summary?.slug,
        databaseId: lists.id,
        event: 'Event 101',
        date: '2024-05-06',
        result: '1-0',
        eco: 'C60',
        white: { name: 'White 101', elo: 2101, fideId: null, country: 'NOR' },
        black: { name: 'Black 101', elo: null, fideId: '1503014', country: null },
        position: summary?.position,
      });
      // A page may start after a game's position instead of at an offset: the same games.
      const positions = everything.map((g) => g.position);
      assert.deepEqual(
        positions,
        [...positions].sort((a, b) => a - b),
      );
      const fromFirst = await store.games.list(bob.id, { limit: 200, offset: 1, after: positions[0] });
      assert.deepEqual(
        fromFirst.map((g) => g.id),
        everything.slice(2).map((g) => g.id),
      );
      // The random end of the id, not its start (the import millisecond, shared by a whole batch).
      assert.equal(summary?.slug, `white-101-vs-black-101-2024-${ids[0]?.slice(-12)}`);
      assert.equal(
        (await store.games.list(alice.id, { limit: 200, offset: 0 })).some((g) => g.databaseId === lists.id),
        false,
      );
    });

    test('getGame: the detail of a live game of the owner; anyone else, a malformed id or NUL: undefined', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Detail' });
      const [id] = (
        await store.games.insert(db, [record(300, { metadata: { Site: 'Bergen', Annotator: 'X' } })])
      ).ids as [string];
      const game = await store.games.get(alice.id, id);
      assert.ok(game);
      assert.deepEqual(game.metadata, { Site: 'Bergen', Annotator: 'X' });
      assert.equal(game.moves, 'e2e4 e7e5');
      assert.equal(game.pgn, record(300).pgn);
      assert.equal(typeof game.updatedAt, 'number');
      assert.equal(await store.games.get(bob.id, id), undefined);
      assert.equal(await store.games.get(alice.id, 'not-a-uuid'), undefined);
      assert.equal(await store.games.get(alice.id, `${id}\u0000`), undefined);
      assert.deepEqual(await store.games.findLive(id), { id, ownerId: alice.id, databaseId: db.id });
    });

    test('an updated or moved game is a duplicate where it now is, and no longer where it was', async () => {
      const first = await store.databases.add({ ownerId: alice.id, name: 'Dedup first' });
      const second = await store.databases.add({ ownerId: alice.id, name: 'Dedup second' });
      const [kept, moving] = (await store.games.insert(first, [record(601), record(602)])).ids as [
        string,
        string,
      ];
      await store.games.update(kept, record(611));
      await store.games.move(moving, second);
      const duplicates = async (db: typeof first, n: number) =>
        (await store.games.insert(db, [record(n)])).duplicates;
      assert.equal(await duplicates(first, 611), 1, 'the new content is found');
      assert.equal(await duplicates(second, 602), 1, 'the moved game is found in its new database');
      assert.equal(await duplicates(first, 601), 0, 'the old content is gone');
      assert.equal(await duplicates(first, 602), 0, 'the moved game is gone from its old database');
    });

    test('update, move and delete: each a new change with a higher seq; tombstones stay in the feed only', async () => {
      const from = await store.databases.add({ ownerId: alice.id, name: 'Writes' });
      const into = await store.databases.add({ ownerId: alice.id, name: 'Target', maxGames: 1 });
      const [g1, g2, g3] = (await store.games.insert(from, [record(401), record(402), record(403)])).ids as [
        string,
        string,
        string,
      ];
      const start = await store.feed.lastSeq();

      const updated = await store.games.update(g1, record(499, { result: '0-1' }));
      assert.ok(updated && updated.seq > start);
      assert.equal(updated.result, '0-1');
      assert.equal((await store.games.get(alice.id, g1))?.white.name, 'White 499');

      const moved = await store.games.move(g2, into);
      assert.ok(moved?.moved && moved.change.seq > updated.seq);
      assert.equal(moved.fromDatabaseId, from.id);
      assert.equal(moved.change.databaseId, into.id);
      const stay = await store.games.move(g2, into);
      assert.deepEqual(stay, { change: moved.change, fromDatabaseId: into.id, moved: false }, 'no write');
      await assert.rejects(store.games.move(g3, into), /full/);
      const bobs = await store.databases.add({ ownerId: bob.id, name: 'Not yours' });
      await assert.rejects(store.games.move(g3, bobs), StoreError);

      const deleted = await store.games.delete(g3);
      assert.ok(deleted?.deleted && deleted.seq > moved.change.seq);
      assert.equal(deleted.white.name, 'White 403', 'a tombstone keeps its names');
      assert.equal(await store.games.get(alice.id, g3), undefined);
      assert.equal(await store.games.delete(g3), undefined);
      assert.equal(await store.games.update(g3, record(1)), undefined);
      assert.equal(await store.games.move(g3, from), undefined);
      assert.equal(await store.databases.countGames(from.id), 1);

      const changes = await allChanges(store, alice.id, start);
      assert.deepEqual(
        changes.map((c) => [c.id, c.deleted]),
        [
          [g1, false],
          [g2, false],
          [g3, true],
        ],
      );
      assert.equal(await store.feed.lastSeq(), deleted.seq);
    });

    test('deleteDatabase: every game a tombstone with its own seq, in import order; the slug stays taken', async () => {
      const doomed = await store.databases.add({ ownerId: bob.id, name: 'Doomed' });
      const ids = (
        await store.games.insert(
          doomed,
          [1, 2, 3, 4].map((n) => record(500 + n)),
        )
      ).ids;
      const start = await store.feed.lastSeq();
      const result = await store.databases.delete(doomed);
      assert.equal(result?.tombstoned, 4);
      assert.equal(await store.databases.delete(doomed), undefined);
      const changes = await allChanges(store, bob.id, start);
      assert.deepEqual(
        changes.map((c) => c.id),
        ids,
      );
      assert.ok(changes.every((c) => c.deleted && c.updatedAt === result?.deletedAt));
      assert.equal(new Set(changes.map((c) => c.seq)).size, 4);
      assert.equal(await store.databases.find(bob.id, 'doomed'), undefined);
      assert.equal((await store.databases.add({ ownerId: bob.id, name: 'Doomed' })).slug, 'doomed-2');
      const empty = await store.databases.add({ ownerId: bob.id, name: 'Empty' });
      assert.deepEqual(await store.databases.delete(empty).then((r) => r?.tombstoned), 0);
    });

    test('listChanges: each game once in its latest state, ordered by seq, paged by a seq cursor', async () => {
      const carol = await store.accounts.addUser({ login: 'carol' });
      const db = await store.databases.add({ ownerId: carol.id, name: 'Feed' });
      const ids = (
        await store.games.insert(
          db,
          [1, 2, 3, 4, 5].map((n) => record(600 + n)),
        )
      ).ids as string[];
      await store.games.update(ids[1] as string, record(699));
      await store.games.delete(ids[3] as string);
      const changes = await allChanges(store, carol.id, 0, 2);
      assert.deepEqual(
        changes.map((c) => c.id),
        [ids[0], ids[2], ids[4], ids[1], ids[3]],
      );
      const seqs = changes.map((c) => c.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
      assert.equal(new Set(changes.map((c) => c.id)).size, 5);
      assert.equal(changes[3]?.white.name, 'White 699');
      assert.equal(changes[4]?.deleted, true);
      const times = changes.map((c) => c.updatedAt);
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        "an owner's updatedAt never decreases with seq",
      );
      assert.deepEqual(await store.feed.changes(carol.id, changes.at(-1)?.seq ?? 0, 10), []);
      assert.deepEqual(await store.feed.changes(carol.id, 0, 2), changes.slice(0, 2));
    });

    test('changePositionAt: the feed from there starts at the first change at or after the time', async () => {
      const dave = await store.accounts.addUser({ login: 'dave' });
      const db = await store.databases.add({ ownerId: dave.id, name: 'Since' });
      const stamps: number[] = [];
      for (let n = 0; n < 4; n++) {
        await store.games.insert(db, [record(700 + n)]);
        stamps.push((await store.feed.changes(dave.id, 0, 100)).at(-1)?.updatedAt as number);
        // Distinct change times: the next write happens a few milliseconds later.
        while (Date.now() <= (stamps.at(-1) as number) + 1) await new Promise((r) => setTimeout(r, 2));
      }
      const all = await store.feed.changes(dave.id, 0, 100);
      for (const [i, stamp] of stamps.entries()) {
        const position = await store.feed.positionAt(dave.id, stamp);
        assert.deepEqual(await store.feed.changes(dave.id, position, 100), all.slice(i), `since change ${i}`);
        const justAfter = await store.feed.positionAt(dave.id, stamp + 1);
        assert.deepEqual(await store.feed.changes(dave.id, justAfter, 100), all.slice(i + 1));
      }
      assert.deepEqual(await store.feed.changes(dave.id, await store.feed.positionAt(dave.id, 0), 100), all);
      assert.equal(await store.feed.positionAt(dave.id, Number.MAX_SAFE_INTEGER), all.at(-1)?.seq);
    });

    test('databasePgn: every live game in import order, across keyset batches; tombstones left out', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Export' });
      const ids = (
        await store.games.insert(
          db,
          [1, 2, 3, 4, 5, 6, 7].map((n) => record(800 + n)),
        )
      ).ids;
      await store.games.delete(ids[2] as string);
      const pgns: string[] = [];
      for await (const game of store.games.databasePgn(db.id, { batchSize: 2 })) pgns.push(game.pgn);
      assert.deepEqual(
        pgns,
        [1, 2, 4, 5, 6, 7].map((n) => record(800 + n).pgn),
      );
      const empty = await store.databases.add({ ownerId: alice.id, name: 'Export empty' });
      for await (const _ of store.games.databasePgn(empty.id)) assert.fail('no game');
    });

    test('openExport: one snapshot whatever commits while it is walked; its seq continues the feed exactly after it', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Snapshot' });
      const other = await store.databases.add({ ownerId: alice.id, name: 'Snapshot other' });
      const ids = (
        await store.games.insert(
          db,
          [1, 2, 3, 4, 5].map((n) => record(900 + n)),
        )
      ).ids as string[];
      const before = await Promise.all(ids.map((id) => store.games.get(alice.id, id)));
      const whole = await store.games.openExport({ ownerId: alice.id });
      const scoped = await store.games.openExport({ ownerId: alice.id, databaseId: db.id });
      // Every kind of write, each committed before the walks read a game.
      const added = (await store.games.insert(db, [record(906)])).ids[0] as string;
      await store.games.update(ids[1] as string, record(907));
      await store.games.move(ids[2] as string, other);
      await store.games.delete(ids[3] as string);
      const walked: unknown[] = [];
      for await (const { metadataJson, ...game } of scoped.detailTexts({ batchSize: 2 }))
        walked.push({ ...game, metadata: JSON.parse(metadataJson) });
      assert.deepEqual(walked, before, 'the games as they were when the export opened');
      const pgns: string[] = [];
      for await (const game of whole.pgn({ batchSize: 2 })) pgns.push(game.id);
      assert.ok(ids.every((id) => pgns.includes(id)) && !pgns.includes(added));
      // The feed after the export's seq: exactly the games written since, each once.
      const changed = await store.feed.changes(alice.id, scoped.seq, 100);
      assert.deepEqual(changed.map((c) => c.id).sort(), [added, ids[1], ids[2], ids[3]].sort());
      assert.equal(whole.seq, scoped.seq);
      // Nothing written since a new export opened: its feed is empty.
      const fresh = await store.games.openExport({ ownerId: alice.id });
      assert.deepEqual(await store.feed.changes(alice.id, fresh.seq, 100), []);
      await fresh.end();
      await fresh.end();
    });

    test('databasePgn: beforeBatch runs before each batch after the first, and what it throws ends the export', async () => {
      const db = await store.databases.add({ ownerId: alice.id, name: 'Export checked' });
      await store.games.insert(
        db,
        [1, 2, 3, 4, 5].map((n) => record(850 + n)),
      );
      let checks = 0;
      const pgns: string[] = [];
      for await (const game of store.games.databasePgn(db.id, {
        batchSize: 2,
        beforeBatch: async () => void checks++,
      }))
        pgns.push(game.pgn);
      assert.equal(pgns.length, 5);
      assert.equal(checks, 2, 'before the second and the third batch');
      const seen: string[] = [];
      const ending = (async () => {
        const beforeBatch = async () => {
          throw new Error('token revoked');
        };
        for await (const game of store.games.databasePgn(db.id, { batchSize: 2, beforeBatch }))
          seen.push(game.pgn);
      })();
      await assert.rejects(ending, /token revoked/);
      assert.equal(seen.length, 2, 'the first batch only');
    });

    test('the server secret is made once and then always the same, also for another process', async () => {
      const secret = await store.accounts.serverSecret();
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(await store.accounts.serverSecret(), secret);
      assert.equal(await (await t.reopen()).accounts.serverSecret(), secret);
    });

    test('the change sequence and times survive a restart: a new process continues above them', async () => {
      const eve = await store.accounts.addUser({ login: 'eve' });
      const db: Database = await store.databases.add({ ownerId: eve.id, name: 'Restart' });
      await store.games.insert(db, [record(900)]);
      const before = await store.feed.changes(eve.id, 0, 10);
      const other = await t.reopen();
      await other.games.insert(db, [record(901)]);
      const after = await other.feed.changes(eve.id, 0, 10);
      assert.equal(after.length, 2);
      assert.ok((after[1]?.seq as number) > (before[0]?.seq as number));
      assert.ok((after[1]?.updatedAt as number) >= (before[0]?.updatedAt as number));
      await store.ping();
    });
  });
}
