// The feed with its games, through the client: changes({ expand: 'game' }) and feed({ expand: 'game' })
// against a real server whose data the CLI changed (a deleted game, an updated one): every live item carries
// the game as game(id) gives it, a tombstone null, and every page is asked with expand=game. The server runs in
// the test's process (serveInProcess).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type ChangesPage,
  ChessportClient,
  type ExpandedChange,
  type GameDetail,
} from '../../packages/client/src/index.ts';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cli, cliJson, type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';

describe("the feed with each change's game", () => {
  let env: Env;
  let server: InProcessServer;
  let token: string;
  let deleted: string;
  let updated: string;
  /** The path and query of every request the client sent. */
  const asked: string[] = [];
  let client: ChessportClient;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'dana']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'dana', 'Main', writePgn(env.dir, 'main.pgn', numberedGames('Main', 7)));
    token = await issue(env, 'dana');
    server = await serveInProcess(env);
    const listed = (await http<{ data: { id: string }[] }>(`${server.base}/api/v1`, '/games', { token })).json
      .data;
    [deleted, updated] = listed.map((game) => game.id) as [string, string];
    assert.equal((await cli(env, ['games', 'delete', deleted])).code, 0);
    const update = writePgn(env.dir, 'update.pgn', [
      { white: 'New White', black: 'New Black', result: '0-1' },
    ]);
    assert.equal((await cli(env, ['games', 'update', updated, update])).code, 0);
    client = new ChessportClient({
      baseUrl: server.base,
      token,
      fetch: (input, init) => {
        const url = new URL(String(input));
        asked.push(url.pathname + url.search);
        return fetch(input, init);
      },
    });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('changes({ expand: "game" }) gives the page the API answers to expand=game', async () => {
    const page = await client.changes({ expand: 'game', limit: 4 });
    const rawPage = await http<ChangesPage<ExpandedChange>>(
      `${server.base}/api/v1`,
      '/changes?limit=4&expand=game',
      { token },
    );
    assert.deepEqual(page, rawPage.json);
    assert.equal(asked.at(-1), '/api/v1/changes?limit=4&expand=game');
  });

  test('feed({ expand: "game" }) asks every page with expand=game; items carry game(id), tombstones null', async () => {
    asked.length = 0;
    const items: ExpandedChange[] = [];
    for await (const page of client.feed({ expand: 'game', limit: 3 })) items.push(...page.data);
    assert.equal(asked.length, 3, '7 items (6 live games and a tombstone) at 3 a page');
    assert.ok(asked.every((path) => /^\/api\/v1\/changes\?(cursor=[^&]+&)?limit=3&expand=game$/.test(path)));
    assert.deepEqual(
      items.map((item) => item.id).sort(),
      [
        ...(
          await http<{ data: { id: string }[] }>(`${server.base}/api/v1`, '/games', { token })
        ).json.data.map((game) => game.id),
        deleted,
      ].sort(),
      'each game once, the deleted one as its tombstone',
    );
    for (const item of items) {
      // Typed: an expanded item's game is a GameDetail or null.
      const game: GameDetail | null = item.game;
      if (item.id === deleted) {
        assert.deepEqual([item.deleted, game], [true, null]);
        continue;
      }
      assert.equal(item.deleted, false);
      assert.deepEqual(game, await client.game(item.id), `game ${item.id}`);
    }
    assert.equal(items.find((item) => item.id === updated)?.game?.white.name, 'New White');
  });

  test('without expand, the items carry no game', async () => {
    const page = await client.changes({ limit: 2 });
    assert.ok(page.data.length === 2 && page.data.every((item) => !('game' in item)));
  });
});
