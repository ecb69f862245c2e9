// GET /changes?expand=game, black-box: every item carries its game exactly as GET /games/{id} gives it (null
// for a deleted game), page after page while the CLI updates, moves, deletes and imports in between; the
// parameter is strict; HEAD, ETags, 304 and compression work on an expanded page as on any other; a page of
// 500 expanded changes is one request and one rate-limit unit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import {
  type Change,
  type FeedPage,
  importNumbered,
  numberedGames,
  writePgn,
} from '../helpers/changes-fixtures.ts';
import { cliJson, http, tempEnv } from '../helpers/harness.ts';
import { serveInProcess } from '../helpers/in-process.ts';
import { bearer, header, raw } from '../helpers/production.ts';
import { makeWorld, type World } from '../helpers/world.ts';

type Json = Record<string, unknown>;
interface ExpandedChange extends Change {
  game: (Json & { id: string; databaseId: string; updatedAt: string }) | null;
}
interface ExpandedPage extends Omit<FeedPage, 'data'> {
  data: ExpandedChange[];
}

let world: World;
before(async () => {
  world = await makeWorld();
});
after(async () => world?.stop());

const query = (params: Record<string, string | number>) =>
  `/changes?${new URLSearchParams(params as Record<string, string>)}`;
const get = <T = Json>(path: string, token = world.tokens.alice) => http<T>(world.base, path, { token });
const expanded = (params: Record<string, string | number> = {}) =>
  get<ExpandedPage>(query({ ...params, expand: 'game' }));

/** Every live game's detail as GET /games/{id} answers it (its text), and the ids of the others (404). */
async function details(ids: string[]): Promise<Map<string, string | null>> {
  const found = new Map<string, string | null>();
  for (const id of ids) {
    const res = await get<{ data: Json }>(`/games/${id}`);
    assert.ok(res.status === 200 || res.status === 404, `${id}: ${res.status}`);
    found.set(id, res.status === 200 ? JSON.stringify(res.json.data) : null);
  }
  return found;
}

/**
 * Checks a page's items against the detail endpoint, asked right after the page (before any other write):
 * a live game's `game` is its detail, byte for byte once serialised (same fields, same order); a tombstone's
 * is null, and its game is 404.
 */
async function assertPageMatchesDetails(page: ExpandedPage): Promise<void> {
  const answers = await details(page.data.map((item) => item.id));
  for (const item of page.data) {
    assert.ok('game' in item, `${item.id} carries game`);
    if (item.deleted) {
      assert.equal(item.game, null, `tombstone ${item.id}`);
      assert.equal(answers.get(item.id), null, `tombstone ${item.id} is 404`);
      continue;
    }
    assert.equal(JSON.stringify(item.game), answers.get(item.id), `game ${item.id}`);
    assert.equal(item.game?.updatedAt, item.updatedAt);
    assert.equal(item.game?.databaseId, item.databaseId);
  }
}

/** Follows the expanded feed from `start` until hasMore is false, checking every page as it comes. */
async function drainExpanded(start: Record<string, string> = {}, limit = 3) {
  const items: ExpandedChange[] = [];
  let params: Record<string, string | number> = { ...start, limit };
  for (;;) {
    const res = await expanded(params);
    assert.equal(res.status, 200, res.text);
    await assertPageMatchesDetails(res.json);
    items.push(...res.json.data);
    if (!res.json.hasMore) return { items, cursor: res.json.nextCursor };
    params = { cursor: res.json.nextCursor, limit };
  }
}

async function liveGames(): Promise<{ id: string; databaseId: string }[]> {
  const res = await get<{ data: { id: string; databaseId: string }[] }>('/games?limit=200');
  assert.equal(res.status, 200);
  return res.json.data;
}

describe('GET /changes?expand=game', () => {
  test('every item is the plain item plus game, the detail endpoint’s answer, on every page size', async () => {
    const plain = await get<FeedPage>(query({ limit: 500 }));
    assert.ok(plain.json.data.length >= 7);
    for (const item of plain.json.data) assert.ok(!('game' in item), 'without expand: no game key');
    for (const limit of [1, 3, 500]) {
      const { items, cursor } = await drainExpanded({}, limit);
      assert.deepEqual(
        items.map(({ game: _, ...item }) => item),
        plain.json.data,
        `limit ${limit}: the same items, in the same order`,
      );
      assert.equal(cursor, plain.json.nextCursor, 'the same cursors');
    }
    // since starts an expanded first run as it starts a plain one.
    const since = await expanded({ since: '2000-01-01T00:00:00Z', limit: 500 });
    assert.equal(since.status, 200);
    assert.deepEqual(
      since.json.data.map((item) => item.id),
      plain.json.data.map((item) => item.id),
    );
  });

  test('page by page, with updates, moves, deletes and imports between the pages, a mirror ends equal', async () => {
    const games = await liveGames();
    assert.ok(games.length >= 7);
    const [first, second, third, fourth] = games as [
      { id: string; databaseId: string },
      { id: string; databaseId: string },
      { id: string; databaseId: string },
      { id: string; databaseId: string },
    ];
    const spare = await cliJson<{ slug: string }>(world.env, [
      'databases',
      'add',
      'Spare',
      '--user',
      'alice',
    ]);
    const doomed = await cliJson<{ database: { slug: string } }>(world.env, [
      'import',
      writePgn(world.env.dir, 'doomed.pgn', numberedGames('Doomed', 3)),
      '--user',
      'alice',
      '--database',
      'Doomed',
    ]);
    const file = (name: string) =>
      writePgn(world.env.dir, `${name}.pgn`, [
        { white: `${name}, White`, black: `${name}, Black`, result: '0-1' },
      ]);
    // One write after each page read: games already read come back at the end of the feed.
    const writes: string[][] = [
      ['games', 'update', first.id, file('Updated')],
      ['games', 'move', second.id, '--database', spare.slug],
      ['games', 'delete', third.id],
      ['databases', 'delete', doomed.database.slug, '--user', 'alice'],
      [
        'import',
        writePgn(world.env.dir, 'late.pgn', numberedGames('Late', 4)),
        '--user',
        'alice',
        '--database',
        spare.slug,
      ],
      ['games', 'update', fourth.id, file('Again')],
      ['games', 'move', fourth.id, '--database', spare.slug],
      ['games', 'delete', second.id],
    ];
    // The mirror a consumer keeps: id -> the detail's text, or gone.
    const mirror = new Map<string, string>();
    let params: Record<string, string | number> = { limit: 2 };
    let pages = 0;
    for (;;) {
      const res = await expanded(params);
      assert.equal(res.status, 200, res.text);
      pages++;
      await assertPageMatchesDetails(res.json);
      for (const item of res.json.data) {
        if (item.game) mirror.set(item.id, JSON.stringify(item.game));
        else mirror.delete(item.id);
      }
      const write = writes.shift();
      if (write) await cliJson(world.env, write);
      if (!res.json.hasMore && !write) break;
      params = { cursor: res.json.nextCursor, limit: 2 };
    }
    assert.ok(pages > 8, `${pages} pages`);
    const live = await liveGames();
    assert.deepEqual([...mirror.keys()].sort(), live.map((game) => game.id).sort());
    const now = await details(live.map((game) => game.id));
    for (const [id, text] of mirror) assert.equal(text, now.get(id), `mirror of ${id}`);
    assert.ok(!mirror.has(third.id) && !mirror.has(second.id));
  });

  test('expand takes only game: any other value, empty, repeated or mixed case is 400 naming it', async () => {
    const { json } = await get<FeedPage>(query({ limit: 1 }));
    for (const bad of [
      'expand=games',
      'expand=',
      'expand',
      'expand=GAME',
      'expand=game,moves',
      'expand=true',
      'expand=game&expand=game',
      `cursor=${json.nextCursor}&expand=pgn`,
    ]) {
      const res = await get<{ error: string; error_description: string }>(`/changes?${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal(res.json.error, 'invalid_request', bad);
      assert.match(res.json.error_description, /expand/, bad);
    }
  });

  test('HEAD, ETag and 304, gzip and br on an expanded page, each its own representation', async () => {
    const alice = bearer(world.tokens.alice);
    const path = `/api/v1${query({ expand: 'game', limit: 5 })}`;
    const plain = await raw(world.server.base, path, { headers: alice });
    assert.equal(plain.status, 200);
    const etag = header(plain, 'etag');
    assert.match(etag, /^"[^"]+"$/);
    const unexpanded = await raw(world.server.base, `/api/v1${query({ limit: 5 })}`, { headers: alice });
    assert.notEqual(header(unexpanded, 'etag'), etag, 'expanded and plain pages have their own tags');

    const zipped = await raw(world.server.base, path, { headers: { ...alice, 'accept-encoding': 'gzip' } });
    assert.equal(header(zipped, 'content-encoding'), 'gzip');
    assert.deepEqual(gunzipSync(zipped.body), plain.body);
    assert.equal(header(zipped, 'etag'), `${etag.slice(0, -1)}-gzip"`);
    assert.ok(zipped.body.length < plain.body.length);
    const brotli = await raw(world.server.base, path, { headers: { ...alice, 'accept-encoding': 'br' } });
    assert.equal(header(brotli, 'content-encoding'), 'br');

    for (const [encoding, tag] of [
      ['identity', etag],
      ['gzip', header(zipped, 'etag')],
    ] as const) {
      const again = await raw(world.server.base, path, {
        headers: { ...alice, 'accept-encoding': encoding, 'if-none-match': tag },
      });
      assert.equal(again.status, 304, encoding);
      assert.equal(again.body.length, 0);
    }
    const head = await raw(world.server.base, path, { method: 'HEAD', headers: alice });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(header(head, 'etag'), etag);
    assert.equal(header(head, 'content-length'), String(plain.body.length));
    const headZipped = await raw(world.server.base, path, {
      method: 'HEAD',
      headers: { ...alice, 'accept-encoding': 'gzip' },
    });
    assert.equal(header(headZipped, 'content-encoding'), 'gzip');
    assert.equal(header(headZipped, 'etag'), header(zipped, 'etag'));
  });
});

describe('a page of 500 expanded changes', () => {
  test('is one request and one rate-limit unit', async () => {
    const env = tempEnv();
    try {
      await cliJson(env, ['users', 'add', 'carol']);
      await cliJson(env, ['apps', 'add', 'mirror']);
      await importNumbered(env, 'carol', 'Bulk', 520);
      const token = (
        await cliJson<{ token: string }>(env, [
          'tokens',
          'issue',
          '--user',
          'carol',
          '--app',
          'mirror',
          '--scopes',
          'games.read',
        ])
      ).token;
      const server = await serveInProcess(env, { RATE_LIMIT_MAX: '10' });
      try {
        const base = `${server.base}/api/v1`;
        const page = await http<ExpandedPage>(base, query({ expand: 'game', limit: 500 }), { token });
        assert.equal(page.status, 200);
        assert.equal(page.json.data.length, 500);
        assert.equal(page.json.hasMore, true);
        assert.ok(page.json.data.every((item) => item.game?.id === item.id));
        assert.equal(page.headers.get('x-ratelimit-remaining'), '9');
        const rest = await http<ExpandedPage>(
          base,
          query({ expand: 'game', limit: 500, cursor: page.json.nextCursor }),
          { token },
        );
        assert.equal(rest.json.data.length, 20);
        assert.equal(rest.json.hasMore, false);
        assert.equal(rest.headers.get('x-ratelimit-remaining'), '8');
      } finally {
        await server.stop();
      }
    } finally {
      env.cleanup();
    }
  });
});
