// The client's filtered lists, games by id and NDJSON export against a real server: each gives what the raw
// HTTP answer holds, the export's cursor continues the feed exactly after the export, and no answer holds
// another user's game. queries-wire.test.ts checks the same methods on the wire, against a server of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChessportClient, ChessportError, type GameDetail } from '../../packages/client/src/index.ts';
import { cli, http } from '../helpers/harness.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
let client: ChessportClient;

before(async () => {
  world = await makeWorld();
  client = new ChessportClient({ baseUrl: world.server.base, token: world.tokens.alice });
});
after(async () => world?.stop());

/** The raw answer's JSON `data`, read without the client. */
async function raw<T>(path: string, token = world.tokens.alice): Promise<T> {
  const res = await http<{ data: T }>(world.base, path, { token });
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return res.json.data;
}

/** Every game's detail, in list order, read without the client. */
async function details(path = '/games?limit=200'): Promise<GameDetail[]> {
  const listed = await raw<{ id: string }[]>(path);
  return Promise.all(listed.map((game) => raw<GameDetail>(`/games/${game.id}`)));
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Whether the server takes a parameter: an older one (or one still being built) answers 400 unknown. */
async function serverTakes(path: string): Promise<boolean> {
  const res = await http(world.base, path, { token: world.tokens.alice });
  return !(res.status === 400 && /unknown|must NOT have additional/i.test(res.text));
}

describe('exportNdjson against a real server', () => {
  test('of /games: every game of the user, each as GET /games/{id} gives it, in list order', async () => {
    const exported = await client.exportNdjson();
    const games = await collect(exported);
    assert.deepEqual(games, await details());
    assert.ok(games.length > 0);
    assert.ok(
      games.every((game) => !world.bob.gameIds.includes(game.id)),
      "none of bob's games",
    );
    assert.equal(typeof exported.cursor, 'string');
  });

  test('of one database, by UUID or slug: its games only', async () => {
    const { main } = world.alice;
    const expected = await details(`/databases/${main.id}/games?limit=200`);
    assert.deepEqual(await collect(await client.exportNdjson({ database: main.id })), expected);
    assert.deepEqual(await collect(await client.exportNdjson({ database: main.slug })), expected);
  });

  test("another user's database is 404 not_found, as for the list", async () => {
    await assert.rejects(
      client.exportNdjson({ database: world.bob.db.id }),
      (error) => error instanceof ChessportError && error.status === 404 && error.error === 'not_found',
    );
  });

  test('its cursor continues the feed exactly after the export: the change made since, and nothing before', async () => {
    const exported = await client.exportNdjson();
    const games = await collect(exported);
    assert.ok(exported.cursor);
    const empty = await client.changes({ cursor: exported.cursor });
    assert.deepEqual(empty.data, [], 'nothing changed since the export');
    const [first] = games;
    assert.ok(first);
    assert.equal((await cli(world.env, ['games', 'delete', first.id])).code, 0);
    const page = await client.changes({ cursor: exported.cursor });
    assert.deepEqual(
      page.data.map((change) => [change.id, change.deleted]),
      [[first.id, true]],
    );
  });
});

describe('filters and gamesByIds against a real server', () => {
  test('games() with filters gives the raw filtered page', async (t) => {
    if (!(await serverTakes('/games?result=1-0'))) return t.skip('the server does not take filters yet');
    for (const [filters, search] of [
      [{ result: '1-0' }, 'result=1-0'],
      [{ eco: 'C', limit: 5 }, 'eco=C&limit=5'],
      [{ dateFrom: '1900-01-01', dateTo: '2100-12-31' }, 'dateFrom=1900-01-01&dateTo=2100-12-31'],
    ] as const) {
      const page = await client.games(filters);
      assert.deepEqual(page.data, await raw(`/games?${search}`), search);
    }
    const all = await collect(client.allGames({ result: '1-0', limit: 1 }));
    assert.deepEqual(all, await raw('/games?result=1-0&limit=200'), 'every page, following rel="next"');
  });

  test("gamesByIds() gives the details in the order given, leaving out bob's and unknown ids", async (t) => {
    const mine = (await details()).slice(0, 3).reverse();
    if (!(await serverTakes(`/games?ids=${mine[0]?.id}`))) return t.skip('the server does not take ids= yet');
    const unknown = '00000000-0000-7000-8000-000000000000';
    const asked = [mine[0]?.id, world.bob.gameIds[0], mine[1]?.id, unknown, mine[2]?.id] as string[];
    assert.deepEqual(await client.gamesByIds(asked), mine);
  });
});
