// `chessport sync --login` and the sign-in it keeps, with the user's part played by a browser of forms
// (test/browser/sync-login.test.ts plays it in Chromium): the options it refuses, a client id the server does
// not take for the device flow, a code that expires (exit code 8), an interrupt while it waits (130), a
// sign-in of another user that does not replace the mirror's (exit code 6), and a saved sign-in that is not
// sent to another address (exit code 6).
// The syncs run in the test's process (cliInProcess; startInProcess for those that sign in, whose code the
// test reads while they wait): their subject is the message, the exit code and the tokens kept. Child
// processes stay for the sync interrupted by SIGINT while it waits (exit 130: the signal is the subject) and
// the server (startServer).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliInProcess, type StartedInProcess, startInProcess } from '../helpers/cli-in-process.ts';
import { type Env, type Server, type Spawned, spawnCli, startServer } from '../helpers/harness.ts';
import { addClient, enterDeviceCode, FormBrowser, syncLoginEnv } from '../helpers/oauth.ts';
import { executeOnStore } from '../helpers/stores.ts';
import { devicePrompt } from '../helpers/sync-processes.ts';
import { loginArgs } from '../helpers/sync-setup.ts';

describe('chessport sync --login', () => {
  let env: Env;
  let server: Server;
  let clientId: string;
  let webClientId: string;

  before(async () => {
    ({ env, clientId } = await syncLoginEnv());
    ({ clientId: webClientId } = await addClient(env, 'Web App', [
      '--redirect-uri',
      'https://app.example.org/cb',
    ]));
    server = await startServer(env);
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  const login = (out: string, extra: string[] = []) => startInProcess(env, loginArgs(server, out, extra));

  const codeOf = async (sync: Spawned | StartedInProcess): Promise<string> => (await devicePrompt(sync)).code;

  const tokensFile = (out: string) => join(out, 'oauth-tokens.json');

  /** `chessport sync` of `server` into `out` with `options`, in this process: for the runs that are refused. */
  const syncOn = (out: string, options: string[]) =>
    cliInProcess(env, ['sync', '--base-url', server.base, '--out', out, ...options]);

  test('options it refuses', async () => {
    const out = join(env.dir, 'refused');
    const both = await syncOn(out, ['--login', '--token', 'x']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /give --token or --login, not both/);
    const alone = await syncOn(out, ['--client-id', clientId]);
    assert.equal(alone.code, 1);
    assert.match(alone.stderr, /--client-id goes with --login/);
    const none = await cliInProcess(env, ['sync', '--base-url', server.base, '--out', out]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /give a token with --token or CHESSPORT_TOKEN, or sign in with --login/);
    const noClient = await cliInProcess(env, ['sync', '--base-url', server.base, '--out', out, '--login']);
    assert.equal(noClient.code, 1);
    assert.match(noClient.stderr, /--login needs --client-id <id>/);
    assert.match(noClient.stderr, /chessport apps add "chessport sync" --device --public/);
  });

  test('a client id the server does not take for the device flow', async () => {
    for (const id of [randomUUID(), webClientId]) {
      const out = join(env.dir, `client-${id}`);
      const refused = await syncOn(out, ['--login', '--client-id', id]);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, new RegExp(`the server refuses client id ${id} for the device flow`));
      assert.equal(existsSync(tokensFile(out)), false);
    }
  });

  test('a code that expires before the user answers: exit code 8, nothing kept', {
    timeout: 60_000,
  }, async () => {
    const out = join(env.dir, 'expired');
    const sync = login(out, ['--client-id', clientId]);
    await codeOf(sync);
    assert.match(sync.output().stderr, /the code is good for 10 minutes/);
    // As if its ten minutes had passed.
    await executeOnStore(
      env.databaseUrl,
      "update oauth_records set expires_at = 1 where model = 'DeviceCode'",
    );
    const done = await sync.exited;
    assert.equal(done.code, 8, done.stderr);
    assert.match(done.stderr, /chessport sync: the code expired before the sign-in was allowed/);
    assert.match(done.stderr, /Run again with --login for a new code/);
    assert.equal(existsSync(tokensFile(out)), false);
  });

  test('interrupted while it waits for the user: exit code 130', { timeout: 60_000 }, async () => {
    const sync = spawnCli(env, loginArgs(server, join(env.dir, 'interrupted'), ['--client-id', clientId]));
    await codeOf(sync);
    sync.child.kill('SIGINT');
    const done = await sync.exited;
    assert.equal(done.code, 130, done.stderr);
  });

  test("another user's sign-in leaves the mirror's alone; the saved client id serves --login again", {
    timeout: 90_000,
  }, async () => {
    const out = join(env.dir, 'ann');
    const first = login(out, ['--client-id', clientId]);
    await enterDeviceCode(new FormBrowser(), server.base, await codeOf(first), 'ann');
    assert.equal((await first.exited).code, 0, first.output().stderr);
    const saved = readFileSync(tokensFile(out), 'utf8');

    // No --client-id: the folder's sign-in names it. bob signs in: his reader is not the mirror's.
    const second = login(out);
    await enterDeviceCode(new FormBrowser(), server.base, await codeOf(second), 'bob');
    const done = await second.exited;
    assert.equal(done.code, 6, done.stderr);
    assert.match(done.stderr, /is the mirror of reader/);
    assert.equal(readFileSync(tokensFile(out), 'utf8'), saved, "ann's sign-in is kept as it was");
    const again = await cliInProcess(env, ['sync', '--base-url', server.base, '--out', out]);
    assert.equal(again.code, 0, again.stderr);
  });

  test('a saved sign-in is not sent to another address', { timeout: 60_000 }, async () => {
    const out = join(env.dir, 'moved');
    const first = login(out, ['--client-id', clientId]);
    await enterDeviceCode(new FormBrowser(), server.base, await codeOf(first), 'ann');
    assert.equal((await first.exited).code, 0, first.output().stderr);
    const saved = readFileSync(tokensFile(out), 'utf8');
    // The same server by another name: --full may move a mirror there, but the tokens stay where they were given.
    const elsewhere = server.base.replace('127.0.0.1', 'localhost');
    const moved = await cliInProcess(env, ['sync', '--base-url', elsewhere, '--out', out, '--full']);
    assert.equal(moved.code, 6, moved.stderr);
    assert.match(
      moved.stderr,
      /holds a sign-in at http:\/\/127\.0\.0\.1:\d+\/api\/v1, not http:\/\/localhost/,
    );
    assert.equal(readFileSync(tokensFile(out), 'utf8'), saved);
  });
});
