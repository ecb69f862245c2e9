// The changes feed (spec "GET /api/v1/changes", docs/design.md 18-22) and the CLI writes that feed it, black-box:
// the real server on a temp store, every change made by the `chessport` CLI.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type Change,
  type FeedPage,
  numberedGames,
  type Player,
  writePgn,
} from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, http, importPgn, issueToken } from '../helpers/harness.ts';
import { serveInProcess } from '../helpers/in-process.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
before(async () => {
  world = await makeWorld();
});
after(async () => world?.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ITEM_KEYS = ['black', 'databaseId', 'deleted', 'id', 'result', 'updatedAt', 'white'];
const PLAYER_KEYS = ['country', 'elo', 'fideId', 'name'];
const CURSOR_INVALID =
  'cursor is not valid: pass the nextCursor of an earlier page, unchanged, with the same token';

type Json = Record<string, unknown>;
interface Summary {
  id: string;
  databaseId: string;
  result: string;
  white: Player;
  black: Player;
}

const get = <T = Json>(path: string, token = world.tokens.alice) => http<T>(world.base, path, { token });
const feed = (query: Record<string, string | number> = {}, token = world.tokens.alice) =>
  get<FeedPage>(`/changes?${new URLSearchParams(query as Record<string, string>)}`, token);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows the feed until hasMore is false; every page must be 200. */
async function drain(
  start: { cursor?: string; since?: string } = {},
  limit?: number,
  token = world.tokens.alice,
) {
  const items: Change[] = [];
  const pages: FeedPage[] = [];
  let query: Record<string, string | number> = { ...start, ...(limit && { limit }) };
  for (;;) {
    const res = await feed(query, token);
    assert.equal(res.status, 200, res.text);
    pages.push(res.json);
    items.push(...res.json.data);
    if (!res.json.hasMore) return { items, pages, cursor: res.json.nextCursor };
    query = { cursor: res.json.nextCursor, ...(limit && { limit }) };
  }
}

async function allGames(token = world.tokens.alice): Promise<Summary[]> {
  const res = await get<{ data: Summary[] }>('/games?limit=200', token);
  assert.equal(res.status, 200);
  return res.json.data;
}

const pgn = (name: string, games: Parameters<typeof writePgn>[2]) => writePgn(world.env.dir, name, games);
const importInto = (file: string, database: string, user = 'alice') =>
  importPgn(world.env, file, user, database);

function assertNonDecreasingTimes(items: Change[]) {
  for (let i = 1; i < items.length; i++) {
    assert.ok(String(items[i - 1]?.updatedAt) <= String(items[i]?.updatedAt), `updatedAt order at ${i}`);
  }
}

describe('GET /changes: reading the feed', () => {
  test('a first run from the beginning: every game of the user once, in change order, every field', async () => {
    const first = await feed();
    assert.equal(first.status, 200);
    assert.deepEqual(Object.keys(first.json).sort(), ['data', 'hasMore', 'nextCursor']);
    assert.equal(first.json.hasMore, false);
    assert.equal(typeof first.json.nextCursor, 'string');
    const games = await allGames();
    assert.equal(games.length, 7);
    // Imported games get their seq in import order, which is also the list order.
    assert.deepEqual(
      first.json.data.map((c) => c.id),
      games.map((g) => g.id),
    );
    for (const item of first.json.data) {
      assert.deepEqual(Object.keys(item).sort(), ITEM_KEYS);
      assert.deepEqual(Object.keys(item.white).sort(), PLAYER_KEYS);
      assert.deepEqual(Object.keys(item.black).sort(), PLAYER_KEYS);
      assert.match(item.id, UUID);
      assert.match(item.updatedAt, ISO_MS);
      assert.equal(item.deleted, false);
      const listed = games.find((g) => g.id === item.id) as Summary;
      assert.deepEqual(
        { databaseId: item.databaseId, result: item.result, white: item.white, black: item.black },
        { databaseId: listed.databaseId, result: listed.result, white: listed.white, black: listed.black },
      );
      const detail = await get<{ data: { updatedAt: string } }>(`/games/${item.id}`);
      assert.equal(item.updatedAt, detail.json.data.updatedAt);
    }
    assertNonDecreasingTimes(first.json.data);
    const carlsen = first.json.data[0];
    assert.deepEqual(carlsen?.white, {
      name: 'Carlsen, Magnus',
      elo: 2830,
      fideId: '1503014',
      country: 'NOR',
    });
    assert.deepEqual(carlsen?.black, {
      name: 'Nepomniachtchi, Ian',
      elo: 2795,
      fideId: '4168119',
      country: 'RUS',
    });
    assert.equal(carlsen?.result, '1-0');
    assert.equal(carlsen?.databaseId, world.alice.main.id);
  });

  test("another user's feed holds only that user's games", async () => {
    const bob = await drain({}, undefined, world.tokens.bob);
    assert.deepEqual(
      bob.items.map((c) => c.id),
      world.bob.gameIds,
    );
  });

  test('paging with small limits visits every game exactly once; hasMore until the last page', async () => {
    const whole = (await drain()).items.map((c) => c.id);
    for (const limit of [1, 2, 3, 7]) {
      const { items, pages } = await drain({}, limit);
      assert.deepEqual(
        items.map((c) => c.id),
        whole,
        `limit ${limit}`,
      );
      assert.equal(pages.length, Math.ceil(whole.length / limit), `limit ${limit}`);
      for (const page of pages.slice(0, -1)) {
        assert.equal(page.data.length, limit);
        assert.equal(page.hasMore, true);
      }
      assert.equal(pages.at(-1)?.hasMore, false);
    }
  });

  test('an empty page keeps a usable cursor: following it after an import gives exactly the new games', async () => {
    const { cursor } = await drain();
    const empty = await feed({ cursor });
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.json, { data: [], nextCursor: cursor, hasMore: false });
    await importInto(pgn('two-new.pgn', numberedGames('Fresh', 2)), world.alice.main.slug);
    const next = await feed({ cursor });
    assert.deepEqual(
      next.json.data.map((c) => [c.white.name, c.black.name, c.deleted]),
      [
        ['Fresh White 1', 'Fresh Black 1', false],
        ['Fresh White 2', 'Fresh Black 2', false],
      ],
    );
    assert.equal(next.json.hasMore, false);
    assert.notEqual(next.json.nextCursor, cursor);
    const after = await feed({ cursor: next.json.nextCursor });
    assert.deepEqual(after.json, { data: [], nextCursor: next.json.nextCursor, hasMore: false });
  });
});

describe('GET /changes: a user without games', () => {
  test('an empty first page, by backfill or since, whose cursor later gives the first games', async () => {
    await cliJson(world.env, ['users', 'add', 'frank']);
    const token = await issueToken(world.env, 'frank', 'app-one', 'games.read');
    const first = await feed({}, token);
    assert.equal(first.status, 200);
    assert.deepEqual(Object.keys(first.json), ['data', 'nextCursor', 'hasMore']);
    assert.deepEqual(first.json.data, []);
    assert.equal(first.json.hasMore, false);
    assert.equal(typeof first.json.nextCursor, 'string');
    const viaSince = await feed({ since: '2000-01-01T00:00:00Z' }, token);
    assert.deepEqual(viaSince.json, first.json);
    const again = await feed({ cursor: first.json.nextCursor, limit: 1 }, token);
    assert.deepEqual(again.json, first.json);
    await importInto(pgn('frank.pgn', numberedGames('Frank', 2)), 'Frank', 'frank');
    const next = await drain({ cursor: first.json.nextCursor }, 1, token);
    assert.deepEqual(
      next.items.map((c) => c.white.name),
      ['Frank White 1', 'Frank White 2'],
    );
  });
});

describe('CLI writes and what the feed shows of them', () => {
  const firstGame = async () => (await allGames())[0] as Summary;

  test('games update: the game comes back after the saved cursor with its new content and a newer updatedAt', async () => {
    const game = await firstGame();
    const before = (await get<{ data: { updatedAt: string; moves: string } }>(`/games/${game.id}`)).json.data;
    const { cursor } = await drain();
    await sleep(5);
    const file = pgn('replacement.pgn', [
      { white: 'Replaced, White', black: 'Replaced, Black', result: '0-1' },
    ]);
    const out = await cliJson<Change>(world.env, ['games', 'update', game.id, file]);
    assert.equal(out.id, game.id);
    const next = await feed({ cursor });
    assert.equal(next.json.data.length, 1);
    const [item] = next.json.data as [Change];
    assert.deepEqual(
      { ...item, updatedAt: undefined },
      {
        id: game.id,
        databaseId: game.databaseId,
        updatedAt: undefined,
        deleted: false,
        white: { name: 'Replaced, White', elo: null, fideId: null, country: null },
        black: { name: 'Replaced, Black', elo: null, fideId: null, country: null },
        result: '0-1',
      },
    );
    assert.ok(item.updatedAt > before.updatedAt, `${item.updatedAt} > ${before.updatedAt}`);
    assert.deepEqual(out, item, 'the CLI prints the change as the feed shows it');
    const detail = (
      await get<{ data: { updatedAt: string; moves: string; white: Player } }>(`/games/${game.id}`)
    ).json.data;
    assert.equal(detail.white.name, 'Replaced, White');
    assert.equal(detail.moves, 'e2e4 e7e5 g1f3 b8c6 f1b5 a7a6');
    assert.equal(detail.updatedAt, item.updatedAt);
    assert.notEqual(detail.moves, before.moves);
    assert.equal((await firstGame()).id, game.id, 'an update keeps the game in its place in the lists');
  });

  test('games update refuses no game, several games, an invalid game, a missing file or an unknown id, changing nothing', async () => {
    const game = await firstGame();
    const detail = (await get(`/games/${game.id}`)).text;
    const { cursor } = await drain();
    const empty = join(world.env.dir, 'empty.pgn');
    writeFileSync(empty, '\n\n');
    const illegal = join(world.env.dir, 'illegal.pgn');
    writeFileSync(illegal, '[White "A"]\n[Black "B"]\n[Result "*"]\n\n1. e5 *\n');
    const cases: [string[], RegExp][] = [
      [['games', 'update', game.id, empty], /holds no game/],
      [['games', 'update', game.id, pgn('two.pgn', numberedGames('Two', 2))], /more than one game/],
      [['games', 'update', game.id, illegal], /not valid/],
      [['games', 'update', game.id, join(world.env.dir, 'missing.pgn')], /missing.pgn: no such file/],
      [
        ['games', 'update', '00000000-0000-4000-8000-000000000000', pgn('one.pgn', numberedGames('One', 1))],
        /no game "00000000-0000-4000-8000-000000000000"/,
      ],
    ];
    for (const [args, message] of cases) {
      const res = await cliInProcess(world.env, [...args, '--json']);
      assert.notEqual(res.code, 0, args.join(' '));
      assert.match(res.stderr, message);
      assert.equal(res.stdout, '');
    }
    assert.equal((await get(`/games/${game.id}`)).text, detail);
    assert.deepEqual((await feed({ cursor })).json.data, []);
  });

  test('games move: to another database of the owner by name, slug or id; it comes back with the new databaseId', async () => {
    const archive = await cliJson<{ id: string; slug: string }>(world.env, [
      'databases',
      'add',
      'The Archive',
      '--user',
      'alice',
    ]);
    const game = await firstGame();
    const { cursor } = await drain();
    const moved = await cliJson<Change & { fromDatabaseId: string; moved: boolean }>(world.env, [
      'games',
      'move',
      game.id,
      '--database',
      'The Archive',
    ]);
    assert.equal(moved.moved, true);
    assert.equal(moved.fromDatabaseId, game.databaseId);
    const next = await feed({ cursor });
    assert.deepEqual(
      next.json.data.map((c) => [c.id, c.databaseId, c.deleted]),
      [[game.id, archive.id, false]],
    );
    const inArchive = await get<{ data: Summary[] }>(`/databases/${archive.slug}/games`);
    assert.deepEqual(
      inArchive.json.data.map((g) => g.id),
      [game.id],
    );
    const inOld = await get<{ data: Summary[] }>(`/databases/${game.databaseId}/games`);
    assert.ok(!inOld.json.data.some((g) => g.id === game.id));
    // Back by id, then a no-op move to where it already is: no write, no feed item.
    await cliJson(world.env, ['games', 'move', game.id, '--database', game.databaseId]);
    const { cursor: back } = await drain({ cursor: next.json.nextCursor });
    const noop = await cliJson<{ moved: boolean }>(world.env, [
      'games',
      'move',
      game.id,
      '--database',
      game.databaseId,
    ]);
    assert.equal(noop.moved, false);
    // The id in upper case, as the API takes it (an auditor's "no game" on both stores).
    const upper = await cliJson<{ id: string; moved: boolean }>(world.env, [
      'games',
      'move',
      game.id.toUpperCase(),
      '--database',
      game.databaseId,
    ]);
    assert.deepEqual([upper.id, upper.moved], [game.id, false]);
    assert.deepEqual((await feed({ cursor: back })).json.data, []);
  });

  test("games move refuses another user's database, an unknown one and an unknown game", async () => {
    const game = await firstGame();
    const cases: [string[], RegExp][] = [
      [['games', 'move', game.id, '--database', world.bob.db.id], /no database/],
      [['games', 'move', game.id, '--database', 'nowhere'], /no database "nowhere"/],
      [['games', 'move', '00000000-0000-4000-8000-000000000000', '--database', 'classics'], /no game/],
    ];
    for (const [args, message] of cases) {
      const res = await cliInProcess(world.env, args);
      assert.notEqual(res.code, 0, args.join(' '));
      assert.match(res.stderr, message);
    }
    assert.equal((await firstGame()).databaseId, game.databaseId);
    // A database at its maxGames takes no more games by moves either (docs/design.md 26).
    await cliJson(world.env, ['databases', 'add', 'Tiny', '--user', 'alice', '--max-games', '1']);
    const [one, two] = await allGames();
    await cliJson(world.env, ['games', 'move', String(one?.id), '--database', 'tiny']);
    const full = await cliInProcess(world.env, ['games', 'move', String(two?.id), '--database', 'tiny']);
    assert.notEqual(full.code, 0);
    assert.match(full.stderr, /database "tiny" is full \(maxGames 1\)/);
    await cliJson(world.env, ['games', 'move', String(one?.id), '--database', String(one?.databaseId)]);
  });

  test('games delete: a tombstone in the feed with names and result; 404 on detail; gone from lists and exports', async () => {
    const games = await allGames();
    const game = games.find((g) => g.white.name === 'Morphy, Paul') as Summary;
    const { cursor } = await drain();
    const out = await cliJson<Change>(world.env, ['games', 'delete', game.id]);
    const next = await feed({ cursor });
    assert.equal(next.json.data.length, 1);
    const [item] = next.json.data as [Change];
    assert.deepEqual(out, item);
    assert.deepEqual(
      { ...item, updatedAt: undefined },
      {
        id: game.id,
        databaseId: game.databaseId,
        updatedAt: undefined,
        deleted: true,
        white: game.white,
        black: game.black,
        result: game.result,
      },
    );
    assert.equal((await get(`/games/${game.id}`)).status, 404);
    assert.equal((await get(`/games/${game.id}?format=pgn`)).status, 404);
    assert.ok(!(await allGames()).some((g) => g.id === game.id));
    const inDb = await get<{ data: Summary[] }>(`/databases/${game.databaseId}/games`);
    assert.ok(!inDb.json.data.some((g) => g.id === game.id));
    const exported = await get(`/databases/${game.databaseId}/games?format=pgn`);
    assert.doesNotMatch(exported.text, /Morphy, Paul/);
    // A tombstone is not a game any more: every write on it is refused.
    for (const args of [
      ['games', 'delete', game.id],
      ['games', 'update', game.id, pgn('again.pgn', numberedGames('Again', 1))],
      ['games', 'move', game.id, '--database', world.alice.main.slug],
    ]) {
      const res = await cliInProcess(world.env, args);
      assert.notEqual(res.code, 0, args.join(' '));
      assert.match(res.stderr, /no game/);
    }
    assert.deepEqual((await feed({ cursor: next.json.nextCursor })).json.data, []);
  });

  test('databases delete: every game of it becomes a tombstone and the database is gone (404 by id and slug)', async () => {
    const doomed = await importInto(pgn('doomed.pgn', numberedGames('Doomed', 3)), 'Doomed');
    const ids = (await get<{ data: Summary[] }>(`/databases/${doomed.id}/games`)).json.data.map((g) => g.id);
    assert.equal(ids.length, 3);
    const { cursor } = await drain();
    const out = await cliJson<{ id: string; gamesDeleted: number }>(world.env, [
      'databases',
      'delete',
      doomed.slug,
      '--user',
      'alice',
    ]);
    assert.equal(out.id, doomed.id);
    assert.equal(out.gamesDeleted, 3);
    const next = await feed({ cursor });
    assert.deepEqual(
      next.json.data.map((c) => [c.id, c.databaseId, c.deleted, c.white.name]),
      ids.map((id, i) => [id, doomed.id, true, `Doomed White ${i + 1}`]),
    );
    const databases = await get<{ data: { id: string }[] }>('/databases');
    assert.ok(!databases.json.data.some((d) => d.id === doomed.id));
    for (const ref of [doomed.id, doomed.slug]) {
      assert.equal((await get(`/databases/${ref}/games`)).status, 404, ref);
      assert.equal((await get(`/databases/${ref}/games?format=pgn`)).status, 404, ref);
    }
    for (const id of ids) assert.equal((await get(`/games/${id}`)).status, 404);
    const again = await cliInProcess(world.env, ['databases', 'delete', doomed.slug, '--user', 'alice']);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /no database "doomed" of user alice/);
    const unknownUser = await cliInProcess(world.env, [
      'databases',
      'delete',
      'classics',
      '--user',
      'nobody',
    ]);
    assert.notEqual(unknownUser.code, 0);
    assert.match(unknownUser.stderr, /no user "nobody"/);
  });
});

describe('GET /changes?since', () => {
  test('since starts at the changes made at or after that time, then continues by cursor', async () => {
    const { items: whole } = await drain();
    assertNonDecreasingTimes(whole);
    const times = [...new Set(whole.map((c) => c.updatedAt))];
    assert.ok(times.length >= 3, 'the suite so far made changes at several times');
    const since = times[Math.floor(times.length / 2)] as string;
    const expected = whole.filter((c) => c.updatedAt >= since);
    assert.ok(expected.length > 0 && expected.length < whole.length);
    const viaSince = await drain({ since }, 2);
    assert.deepEqual(viaSince.items, expected);
    // The same instant in another zone, and finer than milliseconds (rounded up: strictly after `since`).
    const instant = new Date(since);
    const plusTwo = `${new Date(instant.getTime() + 2 * 3600_000).toISOString().slice(0, 23)}+02:00`;
    assert.deepEqual((await drain({ since: plusTwo })).items, expected);
    const finer = `${since.slice(0, 23)}0001Z`;
    assert.deepEqual(
      (await drain({ since: finer })).items,
      whole.filter((c) => c.updatedAt > since),
    );
  });

  test('since before everything is a full backfill; since in the future is an empty page with a usable cursor', async () => {
    const { items: whole } = await drain();
    assert.deepEqual((await drain({ since: '1970-01-01T00:00:00Z' })).items, whole);
    const future = await feed({ since: '2999-01-01T00:00:00.000Z' });
    assert.equal(future.status, 200);
    assert.deepEqual(future.json.data, []);
    assert.equal(future.json.hasMore, false);
    await importInto(pgn('after-future.pgn', numberedGames('Later', 1)), world.alice.main.slug);
    const next = await feed({ cursor: future.json.nextCursor });
    assert.deepEqual(
      next.json.data.map((c) => c.white.name),
      ['Later White 1'],
    );
  });
});

describe('GET /changes: cursors are opaque, authenticated and bound to the reader', () => {
  const aCursor = async () => {
    const res = await feed({ limit: 2 });
    assert.equal(res.json.hasMore, true);
    return res.json.nextCursor;
  };

  test('the same user through the same app may continue; another user or another app may not', async () => {
    const cursor = await aCursor();
    const mine = await feed({ cursor }, world.tokens.alice);
    const sameApp = await feed({ cursor }, world.tokens.alice2);
    assert.equal(sameApp.status, 200);
    assert.deepEqual(sameApp.json, mine.json);
    for (const token of [world.tokens.bob, world.tokens.aliceOtherApp]) {
      const res = await feed({ cursor }, token);
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: CURSOR_INVALID });
    }
  });

  test('a cursor of a server with another secret is 400, even on the same store', async () => {
    const other = await serveInProcess(world.env, {
      CHESSPORT_SECRET: 'another-server-secret-0123456789abcdef',
    });
    try {
      const otherBase = `${other.base}/api/v1`;
      const cursor = await aCursor();
      const res = await http(otherBase, `/changes?cursor=${cursor}`, { token: world.tokens.alice });
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: CURSOR_INVALID });
      const own = await http<FeedPage>(otherBase, '/changes?limit=2', { token: world.tokens.alice });
      assert.equal(
        (await http(otherBase, `/changes?cursor=${own.json.nextCursor}`, { token: world.tokens.alice }))
          .status,
        200,
      );
      assert.equal((await feed({ cursor: own.json.nextCursor })).status, 400);
    } finally {
      await other.stop();
    }
  });

  test('a tampered cursor is 400: every single changed character, truncation, extension', async () => {
    const cursor = await aCursor();
    const tampered = new Set<string>();
    for (let i = 0; i < cursor.length; i++) {
      const c = cursor[i];
      tampered.add(cursor.slice(0, i) + (c === 'A' ? 'B' : 'A') + cursor.slice(i + 1));
    }
    tampered.add(cursor.slice(0, -1));
    tampered.add(`${cursor}A`);
    tampered.add(`${cursor}.`);
    tampered.add(`${Buffer.from('v1.0').toString('base64url')}.${cursor}`);
    for (const bad of tampered) {
      const res = await feed({ cursor: bad });
      assert.equal(res.status, 400, bad);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: CURSOR_INVALID });
    }
  });

  test('malformed cursors are 400', async () => {
    const malformed = ['', 'abc', 'v1.5', '.', 'djEuNQ.', 'x'.repeat(5000), '%00', '🙂'];
    // The length of a cursor, but not one: all zero, and a version byte followed by nothing valid.
    malformed.push('A'.repeat(50), `Ag${'A'.repeat(48)}`, `Ag${'_'.repeat(48)}`, `Ag${'+'.repeat(48)}`);
    for (const bad of malformed) {
      const res = await feed({ cursor: bad });
      assert.equal(res.status, 400, bad);
      assert.equal((res.json as unknown as Json).error, 'invalid_request');
    }
  });
});

describe('GET /changes: strict parameters', () => {
  const badQueries: [string, string][] = [
    ['limit=0', 'limit must be an integer from 1 to 500'],
    ['limit=501', 'limit must be an integer from 1 to 500'],
    ['limit=abc', 'limit must be an integer from 1 to 500'],
    ['limit=-1', 'limit must be an integer from 1 to 500'],
    ['limit=1.5', 'limit must be an integer from 1 to 500'],
    ['limit=', 'limit must be an integer from 1 to 500'],
    ['limit=1e2', 'limit must be an integer from 1 to 500'],
    ['limit=99999999999999999999', 'limit must be an integer from 1 to 500'],
    ['offset=0', 'unknown parameter "offset"'],
    ['cursor=a&cursor=b', 'cursor must be given once'],
    ['since=2026-01-01T00:00:00Z&since=2026-01-02T00:00:00Z', 'since must be given once'],
  ];
  for (const [query, message] of badQueries) {
    test(`${query}: 400 invalid_request`, async () => {
      const res = await get(`/changes?${query}`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: message });
    });
  }

  test('cursor together with since is 400', async () => {
    const { cursor } = await drain();
    const res = await feed({ cursor, since: '2026-01-01T00:00:00Z' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      error: 'invalid_request',
      error_description:
        'cursor and since cannot be combined: since starts a first run, cursor continues one',
    });
  });

  test('since without a zone, not a date, or not a real instant is 400', async () => {
    for (const since of [
      '2026-11-21T06:13:00',
      '2026-11-21T06:13:00.000',
      '2026-11-21',
      '2026-11-21 06:13:00Z',
      'yesterday',
      '1700000000',
      '',
      '2026-02-30T00:00:00Z',
      '2026-11-21T24:00:00Z',
      '2026-11-21T06:60:00Z',
      '2026-11-21T06:13:00+25:00',
      '2026-11-21T06:13:00 02:00',
    ]) {
      const res = await feed({ since });
      assert.equal(res.status, 400, since);
      assert.equal((res.json as unknown as Json).error, 'invalid_request');
      assert.match(String((res.json as unknown as Json).error_description), /^since must be an ISO 8601/);
    }
    // An unencoded + arrives as a space: refused, not misread.
    assert.equal((await get('/changes?since=2026-11-21T08:13:00+02:00')).status, 400);
    assert.equal((await get('/changes?since=2026-11-21T08:13:00%2B02:00')).status, 200);
    // The document names RFC 3339's date-time; the minutes of the time and of the zone may go, as before.
    for (const lenient of [
      '2026-11-21T08:13Z',
      '2026-11-21T08:13:00%2B02',
      '2026-11-21t08:13:00.123456789z',
    ]) {
      assert.equal((await get(`/changes?since=${lenient}`)).status, 200, lenient);
    }
  });

  test('limit defaults to 100 and may be up to 500', async () => {
    await importInto(pgn('bulk.pgn', numberedGames('Bulk', 120)), 'Bulk');
    const defaults = await feed();
    assert.equal(defaults.json.data.length, 100);
    assert.equal(defaults.json.hasMore, true);
    const max = await feed({ limit: 500 });
    assert.equal(max.status, 200);
    assert.equal(max.json.hasMore, false);
    assert.ok(max.json.data.length > 100);
  });
});

describe('GET /changes: authentication and methods, like every endpoint', () => {
  test('no token 401, garbage token 401, a token without games.read 403', async () => {
    const none = await http(world.base, '/changes');
    assert.equal(none.status, 401);
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer realm="chessport", resource_metadata="${world.base.replace(/\/api\/v1$/, '')}/.well-known/oauth-protected-resource"`,
    );
    assert.equal((await http(world.base, '/changes', { token: 'cp_garbage' })).status, 401);
    // Authentication comes first: a bad parameter is not even looked at.
    assert.equal((await http(world.base, '/changes?cursor=bad')).status, 401);
    const scope = await http(world.base, '/changes', { token: world.tokens.aliceMeOnly });
    assert.equal(scope.status, 403);
    assert.deepEqual(Object.keys(scope.json as object).sort(), ['error', 'error_description']);
    assert.equal((scope.json as Json).error, 'insufficient_scope');
    assert.match(scope.headers.get('www-authenticate') ?? '', /scope="games.read"/);
  });

  test('write methods are 405 with Allow: GET, HEAD, OPTIONS; HEAD answers like GET; OPTIONS names the methods', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await http(world.base, '/changes', { method, token: world.tokens.alice });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
      assert.equal((res.json as Json).error, 'method_not_allowed');
    }
    const head = await http(world.base, '/changes', { method: 'HEAD', token: world.tokens.alice });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.match(head.headers.get('content-type') ?? '', /^application\/json/);
    const options = await http(world.base, '/changes', { method: 'OPTIONS' });
    assert.equal(options.status, 204);
    assert.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS');
  });
});
