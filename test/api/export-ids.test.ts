// A database's PGN export with each game's id (gameIds=true), black-box: a [ChessportGameId "<uuid>"] tag
// right after the Seven Tag Roster of every game, the ids those of the JSON list and the feed, in the same
// order; nothing else changes. Strict values; the parameter only with a PGN answer; its own ETag; a file
// exported with ids and imported again gets the new games' ids, never two tags.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliJson, http, importPgn } from '../helpers/harness.ts';
import { bearer, header, raw } from '../helpers/production.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
before(async () => {
  world = await makeWorld();
});
after(async () => world?.stop());

const get = <T = Record<string, unknown>>(path: string, headers: Record<string, string> = {}) =>
  http<T>(world.base, path, { token: world.tokens.alice, headers });
const TAG = /^\[ChessportGameId "([0-9a-f-]{36})"\]$/;

/** The games of a PGN file, split where each one starts. */
const gamesOf = (text: string) => text.split(/\n(?=\[Event )/);

async function listedIds(slug: string): Promise<string[]> {
  const res = await get<{ data: { id: string }[] }>(`/databases/${slug}/games?limit=200`);
  return res.json.data.map((game) => game.id);
}

describe('GET /databases/{id}/games?format=pgn&gameIds=true', () => {
  test('each game carries its id right after the roster; otherwise the export is unchanged', async () => {
    for (const slug of [world.alice.main.slug, world.alice.classics.slug]) {
      const plain = await get(`/databases/${slug}/games?format=pgn`);
      const withIds = await get(`/databases/${slug}/games?format=pgn&gameIds=true`);
      assert.equal(withIds.status, 200);
      assert.equal(withIds.headers.get('content-type'), plain.headers.get('content-type'));
      assert.equal(withIds.headers.get('content-disposition'), plain.headers.get('content-disposition'));
      const games = gamesOf(withIds.text);
      const ids = games.map((game) => {
        const line = game.split('\n')[7] ?? '';
        assert.match(line, TAG, 'the eighth tag line, after the roster');
        return TAG.exec(line)?.[1];
      });
      assert.deepEqual(ids, await listedIds(slug), 'the ids of the JSON list, in its order');
      assert.equal(withIds.text.replace(/^\[ChessportGameId "[^"]*"\]\n/gm, ''), plain.text);
      const off = await get(`/databases/${slug}/games?format=pgn&gameIds=false`);
      assert.equal(off.text, plain.text);
    }
    // By Accept as by format=pgn, and the feed knows every id.
    const accepted = await get(`/databases/${world.alice.main.slug}/games?gameIds=true`, {
      accept: 'application/x-chess-pgn',
    });
    assert.match(accepted.text, /\[ChessportGameId "/);
    const feed = await get<{ data: { id: string }[] }>('/changes?limit=500');
    const fed = new Set(feed.json.data.map((item) => item.id));
    for (const [, id] of accepted.text.matchAll(/\[ChessportGameId "([^"]+)"\]/g))
      assert.ok(fed.has(id as string));
  });

  test('true or false only, and only with a PGN answer: anything else is 400 naming gameIds', async () => {
    const base = `/databases/${world.alice.main.slug}/games`;
    for (const query of [
      'format=pgn&gameIds=1',
      'format=pgn&gameIds=yes',
      'format=pgn&gameIds=TRUE',
      'format=pgn&gameIds=',
      'format=pgn&gameIds',
      'format=pgn&gameIds=true&gameIds=true',
      'gameIds=true',
      'gameIds=false&limit=2',
    ]) {
      const res = await get<{ error: string; error_description: string }>(`${base}?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.json.error, 'invalid_request', query);
      assert.match(res.json.error_description, /gameIds/, query);
    }
  });

  test('its own ETag, 304 and HEAD; gzip decodes to the same file', async () => {
    const alice = bearer(world.tokens.alice);
    const path = `/api/v1/databases/${world.alice.main.slug}/games?format=pgn`;
    const plain = await raw(world.server.base, path, { headers: alice });
    const withIds = await raw(world.server.base, `${path}&gameIds=true`, { headers: alice });
    assert.notEqual(header(withIds, 'etag'), header(plain, 'etag'));
    const again = await raw(world.server.base, `${path}&gameIds=true`, {
      headers: { ...alice, 'if-none-match': header(withIds, 'etag') },
    });
    assert.equal(again.status, 304);
    const crossed = await raw(world.server.base, path, {
      headers: { ...alice, 'if-none-match': header(withIds, 'etag') },
    });
    assert.equal(crossed.status, 200, 'the tag with ids does not validate the file without');
    const head = await raw(world.server.base, `${path}&gameIds=true`, { method: 'HEAD', headers: alice });
    assert.equal(head.status, 200);
    assert.equal(header(head, 'etag'), header(withIds, 'etag'));
    const zipped = await raw(world.server.base, `${path}&gameIds=true`, {
      headers: { ...alice, 'accept-encoding': 'gzip' },
    });
    assert.equal(header(zipped, 'content-encoding'), 'gzip');
  });

  test('a file exported with ids and imported again: the new games get their own ids, one tag each', async () => {
    const exported = await get(`/databases/${world.alice.main.slug}/games?format=pgn&gameIds=true`);
    const file = join(world.env.dir, 'exported-with-ids.pgn');
    writeFileSync(file, exported.text);
    const copy = await importPgn(world.env, file, 'alice', 'Copy');
    const copyIds = await listedIds(copy.slug);
    assert.equal(copyIds.length, gamesOf(exported.text).length);
    // The plain export keeps the tag as the user's file had it (the old ids)...
    const plain = await get(`/databases/${copy.slug}/games?format=pgn`);
    const oldIds = [...plain.text.matchAll(/\[ChessportGameId "([^"]+)"\]/g)].map((m) => m[1]);
    assert.deepEqual(oldIds, await listedIds(world.alice.main.slug));
    // ... and the export with ids names each game by its own id, once.
    const again = await get(`/databases/${copy.slug}/games?format=pgn&gameIds=true`);
    for (const [i, game] of gamesOf(again.text).entries()) {
      const tags = game.split('\n').filter((line) => line.startsWith('[ChessportGameId '));
      assert.deepEqual(tags, [`[ChessportGameId "${copyIds[i]}"]`]);
      assert.match(game.split('\n')[7] ?? '', TAG);
    }
    await cliJson(world.env, ['databases', 'delete', copy.slug, '--user', 'alice']);
  });
});
