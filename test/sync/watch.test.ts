// `chessport sync --watch` (issue 27): once current, the sync keeps its mirror current, woken by long-polls as
// the CLI's writes commit, through a restart of the server, until SIGINT or SIGTERM ends it with exit 0 and a
// mirror equal to the server's data, its PGN files included.
// The watches stay child processes (spawnCli): a signal ends each, and its exit code and last lines are the
// subject; so does the server (startServer), which one test stops and starts again. The CLI's writes while a
// watch runs, the run after it and the refused options run in the test's process (cliInProcess, cliJson).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, type Server, spawnCli, startServer, tempEnv } from '../helpers/harness.ts';
import {
  assertPgnFiles,
  assertSameData,
  type DataSet,
  mirrorData,
  serverData,
} from '../helpers/mirror-check.ts';
import { importInto, issue, syncArgs } from '../helpers/sync-setup.ts';
import { ALICE_PGN, CLASSICS_PGN } from '../helpers/world.ts';

/** Resolves once `text()` holds n lines matching `pattern` (checked every 20 ms, up to 30 s). */
async function lines(text: () => string, pattern: RegExp, n: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const found = text()
      .split('\n')
      .filter((line) => pattern.test(line)).length;
    if (found >= n) return;
    if (Date.now() > until) throw new Error(`${found} of ${n} lines like ${pattern} after 30 s:\n${text()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const CURRENT = /^\d\d:\d\d:\d\d current: /;

/**
 * Resolves once the mirror equals `expected` (checked every 50 ms, up to 30 s): the watch applies each write
 * as it commits, then reads the databases again at the end of the burst.
 */
async function mirrorComesToEqual(out: string, expected: DataSet, context: string): Promise<void> {
  // A deadline, not a speed: after a restart the watch's retry waits out its backoff, longer on a busy machine.
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return assertSameData(mirrorData(out), expected, context);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The watches started, so that one a failed test leaves running is stopped with the suite. */
const running: ReturnType<typeof spawnCli>[] = [];
function watchSync(env: Env, args: string[]): ReturnType<typeof spawnCli> {
  const sync = spawnCli(env, args);
  running.push(sync);
  return sync;
}

describe('chessport sync --watch', () => {
  let env: Env;
  let server: Server;
  let token: string;
  let imports = 0;

  const importMore = (database: string, n: number) =>
    importInto(
      env,
      'alice',
      database,
      writePgn(env.dir, `more-${++imports}.pgn`, numberedGames(`More ${imports}`, n)),
    );

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['users', 'add', 'bob']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'alice', 'Main', ALICE_PGN);
    token = await issue(env, 'alice');
    server = await startServer(env);
  });
  after(async () => {
    for (const sync of running) if (sync.child.exitCode === null) sync.child.kill('SIGKILL');
    await server?.stop();
    env?.cleanup();
  });

  test('follows imports, updates, moves and deletes as they commit; SIGTERM ends it with exit 0 and an equal mirror', async () => {
    const out = join(env.dir, 'watched');
    const sync = watchSync(env, syncArgs(server, token, out, ['--watch', '--pgn-files', '--wait', '20']));
    const stdout = () => sync.output().stdout;
    await lines(stdout, CURRENT, 1);
    const base = `${server.base}/api/v1`;
    assertSameData(mirrorData(out), await serverData(base, token), 'after the backfill');

    const classics = await importInto(env, 'alice', 'Classics', CLASSICS_PGN);
    await lines(stdout, CURRENT, 2);
    assertSameData(mirrorData(out), await serverData(base, token), 'after an import');

    const games = [...(await serverData(base, token)).games.values()];
    const [a, b, c] = games.filter((game) => game.databaseId === classics.id).map((game) => game.id);
    assert.ok(a && b && c);
    const update = writePgn(env.dir, 'update.pgn', [
      { white: 'New White', black: 'New Black', result: '0-1' },
    ]);
    for (const args of [
      ['games', 'update', a, update],
      ['games', 'move', b, '--database', 'Main'],
      ['games', 'delete', c],
    ]) {
      assert.equal((await cliInProcess(env, args)).code, 0, args.join(' '));
    }
    // Bob's changes wake nothing of alice's.
    await importInto(env, 'bob', 'Bob', CLASSICS_PGN);
    await importMore('Main', 3);
    const now = await serverData(base, token);
    await mirrorComesToEqual(out, now, 'after an update, a move, a delete and an import');
    await lines(stdout, CURRENT, 3);
    // The PGN files follow at the end of the burst (each replaced through a temp file and a rename).
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await assertPgnFiles(out, base, token, now.databases);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    sync.child.kill('SIGTERM');
    const exit = await sync.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /stopped watching on SIGTERM/);
    assert.match(exit.stdout, new RegExp(`mirror: ${now.games.size} games in 2 databases`));
    assertSameData(mirrorData(out), now, 'after SIGTERM');
    await assertPgnFiles(out, base, token, now.databases);

    // The next run continues from the cursor the watch stored: nothing left to read.
    const again = await cliJson<{ changes: number }>(env, syncArgs(server, token, out));
    assert.equal(again.changes, 0);
  });

  test('outlives a restart of the server, and SIGINT ends it with exit 0', async () => {
    const out = join(env.dir, 'restarted');
    const logged = server.log().length;
    const sync = watchSync(env, syncArgs(server, token, out, ['--watch', '--json']));
    // --json prints nothing until the end: the mirror's own count says when the backfill is in.
    const base = `${server.base}/api/v1`;
    const waitForMirror = async (size: number) => {
      const until = Date.now() + 30_000;
      for (;;) {
        try {
          if (mirrorData(out).games.size === size) return;
        } catch {
          // not made yet
        }
        if (Date.now() > until) throw new Error(`the mirror does not reach ${size} games`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await waitForMirror((await serverData(base, token)).games.size);
    // The server stops once the run has read a feed page and then the databases (the settle at the end of its
    // catch-up): its next request is the long-poll, retried until the server is back. A request of the
    // catch-up that the stop refuses is retried 4 times over a few seconds only, less than a restart takes on
    // a busy machine: the run then failed ("failed after 5 attempts"), and the mirror never came to equal the
    // server's data. (The test's own serverData reads /databases too, but no feed page.)
    const settled = () => {
      const log = server.log().slice(logged);
      const page = log.indexOf('"url":"/api/v1/changes?');
      return page >= 0 && log.includes('"url":"/api/v1/databases"', page);
    };
    const until = Date.now() + 30_000;
    while (!settled()) {
      if (Date.now() > until)
        throw new Error(`the run did not settle in 30 s:\n${server.log().slice(logged)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const port = Number(new URL(server.base).port);
    assert.equal(await server.stop(), 0);
    // While the server is down: the watch retries its long-poll.
    await importMore('Main', 2);
    server = await startServer(env, {}, port);
    const now = await serverData(`${server.base}/api/v1`, token);
    await mirrorComesToEqual(out, now, 'after the restart');
    sync.child.kill('SIGINT');
    const exit = await sync.exited;
    assert.equal(exit.code, 0, exit.stderr);
    const summary = JSON.parse(exit.stdout) as { mirrorGames: number; retries: number };
    assert.equal(summary.mirrorGames, now.games.size);
    assert.ok(summary.retries > 0, 'it retried while the server was down');
  });

  test('--wait goes with --watch, from 1 to 60', async () => {
    const out = join(env.dir, 'refused');
    for (const [extra, message] of [
      [['--wait', '10'], /--wait goes with --watch/],
      [['--watch', '--wait', '61'], /--wait must be from 1 to 60/],
      [['--watch', '--wait', '0'], /--wait/],
    ] as const) {
      const result = await cliInProcess(env, syncArgs(server, token, out, [...extra]));
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, message);
    }
  });
});
