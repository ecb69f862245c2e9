// examples/follow-feed.mjs as an integrator runs it: `chessport demo` serves its games and prints a token,
// the example is copied into a fresh project that installed the packed @chessport/client (nothing else), and
// run against the demo: it saves every game, then, after a delete and an update through the CLI, a second run
// continues from its cursor with just those changes.
// The example and the demo are child processes (the example's runs are the subject; the demo serves them);
// the CLI's writes between two runs run in the test's process (cliInProcess).
import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { installClient, packClient } from '../helpers/client-package.ts';
import { type Env, http, ROOT, spawnCli, tempEnv } from '../helpers/harness.ts';

const run = promisify(execFile);
const EXAMPLE = join(ROOT, 'examples/follow-feed.mjs');

interface Detail {
  id: string;
  pgn: string;
  result: string;
  white: { name: string | null };
  black: { name: string | null };
}

describe('examples/follow-feed.mjs against chessport demo', () => {
  let env: Env;
  let demo: ChildProcess;
  let base: string;
  let token: string;
  let app: string;

  before(async () => {
    env = tempEnv();
    const spawned = spawnCli(env, ['demo', '--port', '0', '--json']);
    demo = spawned.child;
    await new Promise<void>((resolve, reject) => {
      // spawnCli's own listener runs first: output() already holds this chunk.
      demo.stderr?.on('data', () => {
        if (spawned.output().stderr.includes('listening on')) resolve();
      });
      demo.once('exit', (code) => reject(new Error(`demo exited (${code}): ${spawned.output().stderr}`)));
    });
    const printed = JSON.parse(spawned.output().stdout) as { token: string; urls: string[] };
    token = printed.token;
    base = new URL(printed.urls[0] as string).origin;
    app = join(env.dir, 'app');
    await installClient(app, (await packClient(env.dir)).tarball);
    copyFileSync(EXAMPLE, join(app, 'follow-feed.mjs'));
  });
  after(async () => {
    if (demo && demo.exitCode === null) {
      const exited = new Promise((resolve) => demo.once('exit', resolve));
      demo.kill('SIGTERM');
      await exited;
    }
    env?.cleanup();
  });

  const example = async () =>
    (
      await run(process.execPath, ['follow-feed.mjs', 'out'], {
        cwd: app,
        env: { ...process.env, CHESSPORT_URL: base, CHESSPORT_TOKEN: token },
      })
    ).stdout;
  const api = async <T>(path: string) => {
    const answer = await http<{ data: T }>(`${base}/api/v1`, path, { token });
    assert.equal(answer.status, 200, answer.text);
    return answer.json.data;
  };
  const line = (game: Detail) =>
    `saved ${game.id}: ${game.white.name ?? '?'} - ${game.black.name ?? '?'} ${game.result}`;

  test('the first run saves every game of the demo user as <id>.pgn, in feed order, and the cursor', async () => {
    const output = await example();
    const listed = await api<{ id: string }[]>('/games?limit=200');
    assert.ok(listed.length >= 4, 'the demo has games');
    const games = await Promise.all(listed.map((game) => api<Detail>(`/games/${game.id}`)));
    assert.equal(
      output,
      [
        'following the games of Demo User',
        ...games.map(line),
        `${games.length} saved, 0 deleted (first run); cursor in out/cursor`,
        '',
      ].join('\n'),
    );
    const folder = join(app, 'out/games');
    assert.deepEqual(readdirSync(folder).sort(), games.map((game) => `${game.id}.pgn`).sort());
    for (const game of games) assert.equal(readFileSync(join(folder, `${game.id}.pgn`), 'utf8'), game.pgn);
    assert.ok(readFileSync(join(app, 'out/cursor'), 'utf8').length > 0);
  });

  test('the next run continues from the cursor: a deleted game goes, an updated one is saved again', async () => {
    const [gone, changed] = await api<{ id: string }[]>('/games?limit=2');
    assert.ok(gone && changed);
    assert.equal((await cliInProcess(env, ['games', 'delete', gone.id])).code, 0);
    const update = writePgn(env.dir, 'update.pgn', [
      { white: 'New White', black: 'New Black', result: '0-1' },
    ]);
    assert.equal((await cliInProcess(env, ['games', 'update', changed.id, update])).code, 0);
    const output = await example();
    const updated = await api<Detail>(`/games/${changed.id}`);
    assert.equal(
      output,
      [
        'following the games of Demo User',
        `deleted ${gone.id}`,
        line(updated),
        '1 saved, 1 deleted (continued); cursor in out/cursor',
        '',
      ].join('\n'),
    );
    assert.equal(existsSync(join(app, `out/games/${gone.id}.pgn`)), false);
    assert.equal(readFileSync(join(app, `out/games/${changed.id}.pgn`), 'utf8'), updated.pgn);
    assert.match(await example(), /\n0 saved, 0 deleted \(continued\)/);
  });

  /** The example run against `url` with `key`: its exit code and what it printed. */
  const failing = async (url: string, key: string) =>
    run(process.execPath, ['follow-feed.mjs', 'failing'], {
      cwd: app,
      env: { ...process.env, CHESSPORT_URL: url, CHESSPORT_TOKEN: key },
    }).then(
      () => assert.fail('the example succeeded'),
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );

  test('an unreachable server is one line on stderr and exit code 1, not a stack trace', async () => {
    const closed = await closedPort();
    const failed = await failing(closed, token);
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.match(
      failed.stderr ?? '',
      new RegExp(
        `^follow-feed: GET ${closed}/api/v1/me failed after 5 attempts: connect ECONNREFUSED [^\\n]*\\n$`,
      ),
    );
  });

  test('a token the server refuses is one line too, with the status and the error code', async () => {
    const failed = await failing(base, 'cp_unknown');
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr ?? '', /^follow-feed: 401 invalid_token: [^\n]*\n$/);
  });
});

/** The address of a port nothing listens on. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
