// What a user with a valid token can learn about other users: nothing. Black-box, as an attacker works: from
// the answers of the API alone, with what they show (ids, slugs, timestamps) and guesses of the rest.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { seedNumbered } from '../helpers/changes-fixtures.ts';
import { cliJson, type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, seed, serveInProcess } from '../helpers/in-process.ts';

const ALL = 'user.read,databases.read,games.read';

let env: Env;
let server: InProcessServer;
let base: string;
const tokens = { carol: '', dave: '' };

before(async () => {
  env = tempEnv();
  server = await serveInProcess(env);
  const s = seed(server.store);
  for (const user of ['carol', 'dave']) await s.addUser(user);
  await s.addApp('app-one');
  const load = (user: string, prefix: string, n: number) =>
    seedNumbered(server.store, env.dir, user, prefix, n);
  // Every write of every user takes the next value of one change sequence: Dave's writes come between
  // Carol's.
  await load('carol', 'CarolA', 2);
  await load('dave', 'DaveA', 7);
  await load('carol', 'CarolB', 3);
  tokens.carol = await s.issueToken('carol', 'app-one', ALL);
  tokens.dave = await s.issueToken('dave', 'app-one', ALL);
  base = `${server.base}/api/v1`;
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

interface DatabaseJson {
  id: string;
  slug: string;
  updatedAt: string;
}

describe('the change sequence, which counts every user’s writes, stays hidden', () => {
  test('the PGN export’s ETag cannot be recomputed from what the user sees and a guessed sequence value', async () => {
    const [database] = (await http<{ data: DatabaseJson[] }>(base, '/databases', { token: tokens.carol }))
      .json.data;
    assert.ok(database);
    const answer = await http(base, `/databases/${database.slug}/games?format=pgn`, {
      method: 'HEAD',
      token: tokens.carol,
    });
    assert.equal(answer.status, 200);
    // The tag, without the content coding the server appends (fetch asks for gzip).
    const tag = /^"([^"]+?)(?:-gzip|-br)?"$/.exec(answer.headers.get('etag') ?? '')?.[1];
    assert.ok(tag);
    // The tag was a SHA-256 of the database's id, slug and updatedAt (all in /databases) and the sequence value
    // of its latest write (12 here: Dave's 7 came in between). Trying every value up to a million took a
    // second and found it.
    const updated = String(Date.parse(database.updatedAt));
    for (let seq = 0; seq <= 100_000; seq++) {
      const hash = createHash('sha256');
      for (const part of ['pgn-export/2', database.id, database.slug, updated, String(seq)])
        hash.update(part).update('\n');
      assert.notEqual(hash.digest('base64url').slice(0, 32), tag, `the tag gives away seq ${seq}`);
    }
    // Still a validator: the same tag again, and 304 for it.
    const again = await http(base, `/databases/${database.slug}/games?format=pgn`, {
      token: tokens.carol,
      headers: { 'if-none-match': `"${tag}"` },
    });
    assert.equal(again.status, 304);
  });
});

describe('names that look like another user’s', () => {
  test('a database named with another user’s database id or slug is its owner’s own, and her tags are not his', async () => {
    const carols = (await http<{ data: DatabaseJson[] }>(base, '/databases', { token: tokens.carol })).json
      .data;
    const [carols1] = carols;
    assert.ok(carols1);
    // Dave's games are in a database of his own named Games too (slug games, as hers), and his operator names
    // another database with her database's id, which becomes its slug.
    await cliJson(env, ['databases', 'add', carols1.id, '--user', 'dave']);
    for (const ref of [carols1.id, carols1.slug]) {
      const path = `/databases/${ref}/games`;
      const hers = await http<{ data: { databaseId: string }[] }>(base, path, { token: tokens.carol });
      const his = await http<{ data: { databaseId: string }[] }>(base, path, { token: tokens.dave });
      assert.equal(hers.status, 200);
      assert.equal(his.status, 200);
      assert.ok(hers.json.data.length > 0);
      assert.ok(hers.json.data.every((g) => g.databaseId === carols1.id));
      assert.ok(
        his.json.data.every((g) => g.databaseId !== carols1.id),
        `${ref}: none of hers`,
      );
      // Her validators give him nothing: no 304 for her list or her export.
      for (const query of ['', '?format=pgn']) {
        const tag = (await http(base, path + query, { token: tokens.carol })).headers.get('etag') ?? '';
        const probe = await http(base, path + query, {
          token: tokens.dave,
          headers: { 'if-none-match': tag },
        });
        assert.equal(probe.status, 200, `${ref}${query}`);
      }
    }
  });
});
