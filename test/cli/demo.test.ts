// The demo prints URLs that work: with --port 0 the port the server bound. It never prints the store's
// password.
// Child processes stay where the process is the subject: a demo that serves (--port 0, a port taken: the
// server's exit) and demos and commands at once. The others run in the test's process (run: cliInProcess);
// cliBothWays checks that the real binary prints the same refusal. The demo's successes print a fresh token
// each, so no two runs print the same: the serving demo's child process is the real binary's success.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { describe, test } from 'node:test';
import { maskUrl } from '../../src/cli/store-url.ts';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { BIN, cli, cliBothWays, cliJson, tempEnv } from '../helpers/harness.ts';
import { createTestDatabase, dropTestDatabase, POSTGRES_SKIP, TEST_POSTGRES_URL } from '../helpers/stores.ts';

describe('demo', () => {
  test('--port 0: the printed URLs name the port the server listens on', { timeout: 30_000 }, async () => {
    const env = tempEnv();
    const child = spawn(process.execPath, [BIN, 'demo', '--port', '0', '--json'], {
      env: env.env,
      cwd: env.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('listening on')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`demo exited (${code}): ${stderr}`)));
      });
      const printed = JSON.parse(stdout) as { token: string; urls: string[] };
      const ports = new Set(printed.urls.map((url) => new URL(url).port));
      assert.equal(ports.size, 1);
      const [port] = ports;
      assert.ok(port && port !== '0', `port ${port}`);
      assert.match(stderr, new RegExp(`listening on http://127\\.0\\.0\\.1:${port}/api/v1`));
      const me = await fetch(printed.urls[0] as string, {
        headers: { authorization: `Bearer ${printed.token}` },
      });
      assert.equal(me.status, 200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      env.cleanup();
    }
  });

  test('several demos at once on a fresh store all succeed, and make one user, app and database', async () => {
    const env = tempEnv();
    try {
      // Each looked the user, the app and the database up, found none and added them: the others failed
      // on the unique index ("UNIQUE constraint failed: apps.name"), or made a second "Classics".
      const results = await Promise.all(
        Array.from({ length: 5 }, () => cli(env, ['demo', '--no-serve', '--port', '8080', '--json'])),
      );
      for (const result of results) assert.equal(result.code, 0, result.stderr);
      const databases = await cliJson<{ slug: string; games: number }[]>(env, ['databases', 'list']);
      assert.deepEqual(
        databases.map((d) => [d.slug, d.games]),
        [['classics', 4]],
      );
      assert.equal((await cliJson<unknown[]>(env, ['users', 'list'])).length, 1);
      assert.equal((await cliJson<unknown[]>(env, ['apps', 'list'])).length, 1);
      // The same race in `users add`: the losers say the user exists, in one line.
      const adds = await Promise.all(Array.from({ length: 4 }, () => cli(env, ['users', 'add', 'bob'])));
      assert.equal(adds.filter((r) => r.code === 0).length, 1);
      for (const failed of adds.filter((r) => r.code !== 0))
        assert.equal(failed.stderr, 'chessport: user "bob" already exists\n');
    } finally {
      env.cleanup();
    }
  });

  test('a demo whose port is taken fails in one line and leaves no token behind', {
    timeout: 30_000,
  }, async () => {
    const env = tempEnv();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const result = await cli(env, ['demo', '--port', String(port)]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /^chessport: cannot listen on 127\.0\.0\.1 port \d+: the port is in use[^\n]*\n$/,
      );
      assert.equal(result.stdout, '');
      // It issued its 30-day token first, and nobody ever saw it: a live credential for nothing.
      const tokens = await cliJson<{ state: string }[]>(env, ['tokens', 'list']);
      assert.deepEqual(
        tokens.filter((t) => t.state === 'active'),
        [],
      );
    } finally {
      taken.close();
      env.cleanup();
    }
  });

  test('--no-serve with --port 0 is refused: there is no port to print', async () => {
    const env = tempEnv();
    try {
      const result = await cliBothWays(env, ['demo', '--no-serve', '--port', '0']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^chessport: --port 0 picks a free port when the demo serves[^\n]*\n$/);
    } finally {
      env.cleanup();
    }
  });

  test('a PostgreSQL store is printed without its password', {
    skip: !TEST_POSTGRES_URL && POSTGRES_SKIP,
  }, async () => {
    const url = new URL(await createTestDatabase());
    // A password the server ignores (trust) or needs: either way it must not be printed.
    url.password ||= 's3cret';
    const password = url.password;
    const env = tempEnv({ DATABASE_URL: url.toString() });
    try {
      const json = await cliJson<{ store: string }>(env, ['demo', '--no-serve']);
      assert.equal(json.store, maskUrl(url.toString()));
      assert.ok(!json.store.includes(password));
      const text = await run(env, ['demo', '--no-serve']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /store postgres:\/\/[^:]+:\*\*\*@/);
      assert.ok(!text.stdout.includes(password) && !text.stderr.includes(password));
    } finally {
      env.cleanup();
      await dropTestDatabase(url.toString());
    }
  });
});

test('maskUrl hides a URL’s password and nothing else', () => {
  assert.equal(maskUrl('postgres://app:s3cret@db:5432/chess'), 'postgres://app:***@db:5432/chess');
  assert.equal(maskUrl('postgresql://app@db/chess'), 'postgresql://app@db/chess');
  assert.equal(maskUrl('data/chessport.sqlite'), 'data/chessport.sqlite');
  assert.equal(
    maskUrl('postgres://app:p%40ss@db/chess?sslmode=require'),
    'postgres://app:***@db/chess?sslmode=require',
  );
  assert.equal(
    maskUrl('postgres://app:pw@db/chess?sslmode=require&password=s3cret&sslpassword=k%26y#password=x'),
    'postgres://app:***@db/chess?sslmode=require&password=***&sslpassword=***#password=x',
  );
});
