// Whose a mirror is, end to end: a real server with two users, and `chessport sync` runs on one folder with
// tokens of the owner, of another user, of the owner through another app and at another address. A run
// that must not follow the folder's owner writes nothing, and says why with exit code 6.
// The syncs and the servers (serveInProcess, the same store at a second address) run in the test's process
// (cliInProcess, cliJson): the subject is the mirror, the message and the exit code. No child process starts.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SyncSummary } from '@chessport/sync';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  assertPgnFiles,
  assertSameData,
  mirrorData,
  mirrorState,
  serverData,
  setMirrorState,
} from '../helpers/mirror-check.ts';
import { importInto, issue, syncArgs } from '../helpers/sync-setup.ts';

describe('a mirror belongs to the reader and the server it was made for', () => {
  let env: Env;
  let server: InProcessServer;
  let base: string;
  let out: string;
  const tokens = { carol: '', bob: '', carolOtherApp: '', carolWithoutUserRead: '' };

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    for (const user of ['carol', 'bob']) await cliJson(env, ['users', 'add', user]);
    for (const app of ['mirror', 'other']) await cliJson(env, ['apps', 'add', app]);
    await importInto(env, 'carol', 'Carol Games', writePgn(env.dir, 'carol.pgn', numberedGames('Carol', 6)));
    await importInto(env, 'bob', 'Bob Games', writePgn(env.dir, 'bob.pgn', numberedGames('Bob', 4)));
    tokens.carol = await issue(env, 'carol');
    tokens.bob = await issue(env, 'bob');
    tokens.carolOtherApp = await issue(env, 'carol', undefined, 'other');
    tokens.carolWithoutUserRead = await issue(env, 'carol', 'games.read,databases.read');
    server = await serveInProcess(env);
    base = `${server.base}/api/v1`;
    out = join(env.dir, 'carol-mirror');
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  const readerOf = async (token: string) =>
    (await http<{ data: { id: string } }>(base, '/me', { token })).json.data.id;
  const snapshot = () => ({ data: mirrorData(out), state: mirrorState(out) });

  test("the first run records the server and the token's reader (its /me id)", async () => {
    const summary = await cliJson<SyncSummary>(env, syncArgs(server, tokens.carol, out, ['--pgn-files']));
    assert.equal(summary.mirrorGames, 6);
    const state = mirrorState(out);
    assert.equal(state.base_url, base);
    assert.equal(state.reader, await readerOf(tokens.carol));
    assertSameData(mirrorData(out), await serverData(base, tokens.carol), 'after the first run');
  });

  test("another user's token is refused with exit 6 before anything is written; --full does not switch either", async () => {
    const before = snapshot();
    const bob = await readerOf(tokens.bob);
    for (const extra of [[], ['--full'], ['--full', '--pgn-files'], ['--limit', '1']]) {
      const refused = await cliInProcess(env, syncArgs(server, tokens.bob, out, extra));
      assert.equal(refused.code, 6, `${extra.join(' ')}: ${refused.stderr}`);
      assert.match(
        refused.stderr,
        /^chessport sync: \S+mirror\.sqlite is the mirror of reader [0-9a-f-]{36}, /,
      );
      assert.ok(refused.stderr.includes(`this token's reader (its /me id) is ${bob}`), refused.stderr);
      assert.match(refused.stderr, /Nothing was written\..*--full --switch-reader/);
      assert.doesNotMatch(refused.stderr, /saved cursor|\n\s+at /);
      assert.deepEqual(snapshot(), before, `${extra.join(' ')}: the mirror is untouched`);
    }
    assert.deepEqual(
      mirrorData(out).databases.map((db) => db.name),
      ['Carol Games'],
      "none of bob's databases",
    );
  });

  test("the owner's token through another app is another reader (another pairwise id): exit 6", async () => {
    const before = snapshot();
    const refused = await cliInProcess(env, syncArgs(server, tokens.carolOtherApp, out));
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /another user's or another app's/);
    assert.deepEqual(snapshot(), before);
  });

  test('--switch-reader goes only with --full', async () => {
    const before = snapshot();
    const refused = await cliInProcess(env, syncArgs(server, tokens.bob, out, ['--switch-reader']));
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--switch-reader goes with --full/);
    assert.deepEqual(snapshot(), before);
  });

  test('a token without user.read is refused with exit 4, naming the scope; the mirror is untouched', async () => {
    const before = snapshot();
    const refused = await cliInProcess(env, syncArgs(server, tokens.carolWithoutUserRead, out));
    assert.equal(refused.code, 4);
    assert.match(
      refused.stderr,
      /lacks the user\.read scope.*needs user\.read, games\.read and databases\.read/,
    );
    assert.deepEqual(snapshot(), before);
  });

  test("the owner's token continues from the cursor as before", async () => {
    await importInto(env, 'carol', 'Carol Games', writePgn(env.dir, 'more.pgn', numberedGames('More', 2)));
    const summary = await cliJson<SyncSummary>(env, syncArgs(server, tokens.carol, out, ['--pgn-files']));
    assert.deepEqual([summary.resumed, summary.gamesUpserted, summary.mirrorGames], [true, 2, 8]);
  });

  test('another address is refused before any request; --full moves the mirror there for its own reader only', async () => {
    const moved = join(env.dir, 'moved');
    await cliJson(env, syncArgs(server, tokens.carol, moved));
    // The same server (store and secret) at a second address: the same reader ids.
    const second = await serveInProcess(env);
    try {
      const before = { data: mirrorData(moved), state: mirrorState(moved) };
      for (const token of [tokens.carol, tokens.bob]) {
        const refused = await cliInProcess(env, syncArgs(second, token, moved));
        assert.equal(refused.code, 6, refused.stderr);
        assert.ok(refused.stderr.includes(`mirrors ${base}, not ${second.base}/api/v1.`), refused.stderr);
        assert.match(refused.stderr, /Nothing was written/);
      }
      const other = await cliInProcess(env, syncArgs(second, tokens.bob, moved, ['--full']));
      assert.equal(other.code, 6, other.stderr);
      assert.match(other.stderr, /is the mirror of reader/);
      assert.deepEqual({ data: mirrorData(moved), state: mirrorState(moved) }, before);

      const summary = await cliJson<SyncSummary>(env, syncArgs(second, tokens.carol, moved, ['--full']));
      assert.equal(summary.resumed, false);
      assert.equal(mirrorState(moved).base_url, `${second.base}/api/v1`);
      assertSameData(mirrorData(moved), await serverData(base, tokens.carol), 'after the move');
    } finally {
      await second.stop();
    }
  });

  test('a mirror of an older sync, which recorded no reader, is checked by its saved cursor', async () => {
    setMirrorState(out, 'reader', null);
    const before = snapshot();
    for (const extra of [[], ['--full']]) {
      const refused = await cliInProcess(env, syncArgs(server, tokens.bob, out, extra));
      assert.equal(refused.code, 6, refused.stderr);
      assert.match(refused.stderr, /does not record whose mirror it is.*refuses its saved cursor/);
      assert.deepEqual(snapshot(), before);
    }
    const summary = await cliJson<SyncSummary>(env, syncArgs(server, tokens.carol, out, ['--pgn-files']));
    assert.equal(summary.resumed, true);
    assert.equal(mirrorState(out).reader, await readerOf(tokens.carol), 'the owner is recorded now');
  });

  test("a cursor the server refuses from the mirror's own reader exits 5; --full starts over", async () => {
    const { cursor } = mirrorState(out);
    assert.ok(cursor);
    setMirrorState(out, 'cursor', `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`);
    const rejected = await cliInProcess(env, syncArgs(server, tokens.carol, out));
    assert.equal(rejected.code, 5, rejected.stderr);
    // The server's description, then the advice, as two sentences on one line.
    assert.match(
      rejected.stderr,
      /^chessport sync: the server no longer accepts the saved cursor: [^\n]+[.!?] Run again with --full to start over\.\n$/,
    );
    const summary = await cliJson<SyncSummary>(
      env,
      syncArgs(server, tokens.carol, out, ['--full', '--pgn-files']),
    );
    assert.equal(summary.resumed, false);
    assertSameData(mirrorData(out), await serverData(base, tokens.carol), 'after --full');
  });

  test('--full --switch-reader gives the mirror to the new reader, data and PGN files; the former is then refused', async () => {
    const summary = await cliJson<SyncSummary>(
      env,
      syncArgs(server, tokens.bob, out, ['--full', '--switch-reader', '--pgn-files']),
    );
    assert.deepEqual([summary.resumed, summary.mirrorGames, summary.mirrorDatabases], [false, 4, 1]);
    assert.equal(mirrorState(out).reader, await readerOf(tokens.bob));
    const bob = await serverData(base, tokens.bob);
    assertSameData(mirrorData(out), bob, "bob's mirror");
    await assertPgnFiles(out, base, tokens.bob, bob.databases);
    const refused = await cliInProcess(env, syncArgs(server, tokens.carol, out));
    assert.equal(refused.code, 6, refused.stderr);
  });
});
