// The whole exports as NDJSON and their snapshot cursor, black-box: GET /games and GET /databases/{id}/games
// with format=ndjson (or Accept: application/x-ndjson) stream one game detail a line, exactly the data of
// GET /games/{id}, in the JSON list's order; paging parameters are refused; X-Changes-Cursor continues the
// feed exactly after the export's snapshot: a client that takes the export and then follows the feed from
// it, while CLI writers import, update, move and delete, ends with exactly the store's games.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliJson, type Env, http, importPgn, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { ALICE_PGN, CLASSICS_PGN } from '../helpers/world.ts';

let env: Env;
let server: InProcessServer;
let base: string;
let alice: string;
let bob: string;
let main: { id: string; slug: string };

before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['users', 'add', 'bob']);
  await cliJson(env, ['apps', 'add', 'app-one']);
  main = await importPgn(env, ALICE_PGN, 'alice', 'Main');
  await importPgn(env, CLASSICS_PGN, 'alice', 'Classics');
  await importPgn(env, CLASSICS_PGN, 'bob', 'Bobs');
  alice = await issueToken(env, 'alice', 'app-one', 'games.read databases.read');
  bob = await issueToken(env, 'bob', 'app-one', 'games.read databases.read');
  // The suite's requests share one token; the snapshot test's clients take exports and follow the feed as fast
  // as they can while the writers run: the rate limit is not what this suite checks.
  server = await serveInProcess(env, { RATE_LIMIT_MAX: '100000' });
  base = `${server.base}/api/v1`;
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

type Detail = { id: string } & Record<string, unknown>;

/** A PGN file of the given text in the test's folder (for `games update`): its path. */
function pgnFile(name: string, text: string): string {
  const path = join(env.dir, name);
  writeFileSync(path, text);
  return path;
}

const get = <T = Record<string, unknown>>(
  path: string,
  headers: Record<string, string> = {},
  token = alice,
) => http<T>(base, path, { token, headers });

/** The lines of an NDJSON body, each parsed; every line ends with a newline. */
function linesOf(text: string): Detail[] {
  if (text === '') return [];
  assert.ok(text.endsWith('\n'), 'the last line ends with a newline');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Detail);
}

/** Every id of a JSON list, page by page. */
async function listedIds(path: string, token = alice): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await get<{ data: { id: string }[] }>(`${path}?limit=200&offset=${offset}`, {}, token);
    ids.push(...page.json.data.map((game) => game.id));
    if (page.json.data.length < 200) return ids;
  }
}

/** The export as a map by id, and its cursor. */
async function exported(token = alice): Promise<{ games: Map<string, Detail>; cursor: string }> {
  const answer = await get('/games?format=ndjson', {}, token);
  assert.equal(answer.status, 200);
  const cursor = answer.headers.get('x-changes-cursor');
  assert.ok(cursor);
  return { games: new Map(linesOf(answer.text).map((game) => [game.id, game])), cursor };
}

interface FeedPage {
  data: { id: string; deleted: boolean; game: Detail | null }[];
  nextCursor: string;
  hasMore: boolean;
}

/** Follows the feed from `cursor` to its end, applying every change to `games`; the cursor reached. */
async function follow(games: Map<string, Detail>, cursor: string, token = alice): Promise<string> {
  let at = cursor;
  for (;;) {
    const page = await get<FeedPage>(`/changes?expand=game&limit=500&cursor=${at}`, {}, token);
    assert.equal(page.status, 200);
    for (const item of page.json.data) {
      if (item.deleted || !item.game) games.delete(item.id);
      else games.set(item.id, item.game);
    }
    at = page.json.nextCursor;
    if (!page.json.hasMore) return at;
  }
}

describe('NDJSON exports', () => {
  test('one game detail a line, the data of GET /games/{id}, in the list’s order; by format or Accept', async () => {
    for (const path of ['/games', `/databases/${main.slug}/games`, `/databases/${main.id}/games`]) {
      const answer = await get(`${path}?format=ndjson`);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers.get('content-type'), 'application/x-ndjson', path);
      const games = linesOf(answer.text);
      assert.deepEqual(
        games.map((game) => game.id),
        await listedIds(path),
        path,
      );
      assert.ok(games.length > 0, path);
      // Byte for byte: each line is the JSON of the game's detail as GET /games/{id} answers it.
      const lines = answer.text.slice(0, -1).split('\n');
      for (const [i, game] of games.entries()) {
        const detail = (await get(`/games/${game.id}`)).json.data;
        assert.equal(lines[i], JSON.stringify(detail), path);
      }
      const accepted = await get(path, { accept: 'application/x-ndjson' });
      assert.equal(accepted.headers.get('content-type'), 'application/x-ndjson', path);
      assert.equal(accepted.text, answer.text, path);
      // A format parameter decides over Accept.
      const json = await get(`${path}?limit=1`, { accept: 'application/json' });
      assert.match(String(json.headers.get('content-type')), /^application\/json/);
    }
  });

  test('a game updated and a game moved after their import: their lines are their details as they are now', async () => {
    const updated = pgnFile(
      'updated-line.pgn',
      '[Event "Line \\"updated\\""]\n[Site "?"]\n[Date "2024.02.03"]\n[Round "?"]\n[White "Ü, Ö"]\n' +
        '[Black "Y"]\n[Result "0-1"]\n[Annotator "Tab\there"]\n\n{ new\ncontent } 1. d4 d5 0-1\n',
    );
    const moving = await importPgn(env, CLASSICS_PGN, 'alice', 'Moving');
    const [first, second] = (await exported()).games.keys();
    assert.ok(first && second);
    await cliJson(env, ['games', 'update', first, updated]);
    await cliJson(env, ['games', 'move', second, '--database', moving.slug]);
    const answer = await get('/games?format=ndjson');
    const lines = answer.text.slice(0, -1).split('\n');
    const byId = new Map(lines.map((line) => [(JSON.parse(line) as Detail).id, line]));
    for (const id of [first, second]) {
      const detail = (await get<{ data: Detail }>(`/games/${id}`)).json.data;
      assert.equal(byId.get(id), JSON.stringify(detail), id);
    }
    const now = JSON.parse(byId.get(first) as string) as Detail;
    assert.equal(now.event, 'Line "updated"');
    assert.equal((now.metadata as Record<string, string>).Annotator, 'Tab\there');
    assert.match(String(now.pgn), /1\. d4 d5 0-1/);
    assert.equal((JSON.parse(byId.get(second) as string) as Detail).databaseId, moving.id);
    // The same on the database's export, which holds the moved game now.
    const moved = await get(`/databases/${moving.id}/games?format=ndjson`);
    assert.ok(moved.text.split('\n').includes(byId.get(second) as string));
  });

  test('only the token’s user’s games; another user’s export holds none of them', async () => {
    const mine = new Set((await exported(alice)).games.keys());
    const theirs = [...(await exported(bob)).games.keys()];
    assert.ok(theirs.length > 0);
    for (const id of theirs) assert.ok(!mine.has(id));
    assert.deepEqual(theirs, await listedIds('/games', bob));
  });

  test('limit, offset and unknown formats are 400; gameIds only with PGN', async () => {
    for (const query of [
      'format=ndjson&limit=5',
      'format=ndjson&offset=0',
      'format=json',
      'format=NDJSON',
      'format=ndjson&format=ndjson',
      'format=ndjson&gameIds=true',
    ]) {
      for (const path of ['/games', `/databases/${main.slug}/games`]) {
        if (query.includes('gameIds') && path === '/games') continue;
        const answer = await get<{ error: string }>(`${path}?${query}`);
        assert.equal(answer.status, 400, `${path}?${query}`);
        assert.equal(answer.json.error, 'invalid_request');
      }
    }
  });

  test('X-Changes-Cursor on PGN and NDJSON: nothing written since, the feed from it is empty', async () => {
    for (const path of [
      '/games?format=ndjson',
      '/games?format=pgn',
      `/databases/${main.slug}/games?format=pgn`,
    ]) {
      const answer = await get(path);
      const cursor = answer.headers.get('x-changes-cursor');
      assert.ok(cursor, path);
      const page = await get<FeedPage>(`/changes?cursor=${cursor}`);
      assert.equal(page.status, 200);
      assert.deepEqual(page.json.data, [], path);
      // The cursor is the token user's, bound like any other: another user's token refuses it.
      assert.equal((await get(`/changes?cursor=${cursor}`, {}, bob)).status, 400);
    }
  });
});

describe('an export and then the feed from its cursor, while writers import, update, move and delete', () => {
  test('ends with exactly the store’s games', async () => {
    const updated = pgnFile(
      'updated.pgn',
      '[Event "Updated"]\n[Site "?"]\n[Date "2024.01.01"]\n[Round "?"]\n[White "X"]\n[Black "Y"]\n' +
        '[Result "1-0"]\n\n1. e4 e5 2. Nf3 1-0\n',
    );
    const start = [...(await exported()).games.keys()];
    const writes = async () => {
      await importPgn(env, CLASSICS_PGN, 'alice', 'Third');
      await cliJson(env, ['games', 'update', start[0] as string, updated]);
      await cliJson(env, ['games', 'move', start[1] as string, '--database', main.slug]);
      await cliJson(env, ['games', 'delete', start[2] as string]);
      await importPgn(env, ALICE_PGN, 'alice', 'Fourth');
      await cliJson(env, ['games', 'delete', start[3] as string]);
    };
    // Clients that take the export at every moment of the writes, and follow the feed from its cursor.
    const clients: { games: Map<string, Detail>; cursor: string }[] = [];
    let writing = true;
    const writers = writes().finally(() => {
      writing = false;
    });
    while (writing) {
      const client = await exported();
      client.cursor = await follow(client.games, client.cursor);
      clients.push(client);
    }
    await writers;
    clients.push(await exported());
    const truth = (await exported()).games;
    assert.ok(truth.size > start.length);
    for (const client of clients) {
      await follow(client.games, client.cursor);
      assert.deepEqual(
        [...client.games.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
        [...truth.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    }
  });
});
