// The take-over of a first `chessport sync`: one NDJSON export of /games (one snapshot of the server's store),
// then the changes feed from the export's X-Changes-Cursor. Against a real server: the requests it sends,
// writes made while the export streams (imports, an update, a move, deletes, a new database) reaching the
// mirror through the feed, a take-over killed mid-export and run again, and a server without the export,
// which the sync takes over through the feed as before. Every check compares the mirror with what the API
// serves, game for game.
// The syncs and the CLI's writes run in the test's process (cliInProcess, cliJson, SyncRun). Child processes
// stay for the server (startServer) and the take-overs killed with SIGKILL mid-export (spawnSync: the kill
// is the subject).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SyncSummary } from '@chessport/sync';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, http, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import {
  assertSameData,
  mirrorData,
  mirroredCount,
  mirrorHolds,
  serverData,
} from '../helpers/mirror-check.ts';
import {
  heldAfter,
  type RecordingProxy,
  recordingProxy,
  upstreamExport,
} from '../helpers/recording-proxy.ts';
import { spawnSync } from '../helpers/sync-processes.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';
import { Mirror, SyncRun } from '../helpers/workspace-sources.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

describe('a first sync takes the games over from one NDJSON export, then follows the feed from its cursor', () => {
  let env: Env;
  let server: Server;
  let base: string;
  let token: string;
  let proxy: RecordingProxy;
  /** The proxy plays an older server, which refuses format=ndjson as it refuses any format but pgn. */
  let older = false;
  /**
   * The proxy sends this many lines of an NDJSON export, and the rest once `released` resolves: a run killed
   * meanwhile is killed mid-export, however fast the machine.
   */
  let holdAfter: { lines: number; released: Promise<void> } | undefined;

  before(async () => {
    // STREAM_MIN_RATE off: one test holds the export's body while the CLI writes, as long as a busy machine
    // takes, and a server that cut a slow reader would end that export.
    env = tempEnv({ RATE_LIMIT_MAX: '1000000', STREAM_MIN_RATE: '0' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['users', 'add', 'bob']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'alice', 'Main', writePgn(env.dir, 'main.pgn', numberedGames('Main', 1200)));
    await importInto(env, 'alice', 'Classics', CLASSICS_PGN);
    // Another user's games, which no export or feed of alice's may hold.
    await importInto(env, 'bob', 'Bob Games', writePgn(env.dir, 'bob.pgn', numberedGames('Bob', 20)));
    token = await issue(env, 'alice');
    server = await startServer(env);
    base = `${server.base}/api/v1`;
    proxy = await recordingProxy(server.base, async (req) => {
      const format = new URL(req.url ?? '/', 'http://proxy').searchParams.get('format');
      const held = holdAfter;
      if (held && format === 'ndjson')
        return upstreamExport(server.base, req, (text) => heldAfter(text, held.lines, held.released));
      if (!older || format === null) return undefined;
      return {
        status: 400,
        type: 'application/json',
        body: JSON.stringify({
          error: 'invalid_request',
          error_description: 'querystring/format must be equal to one of the allowed values',
        }),
      };
    });
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
    env?.cleanup();
  });

  const viaProxy = (out: string, extra: string[] = []) =>
    cliJson<SyncSummary>(env, ['sync', '--base-url', proxy.base, '--token', token, '--out', out, ...extra]);

  test('sends /me, /databases, one export of /games, one feed page from its cursor and /databases', async () => {
    proxy.requests.length = 0;
    const out = join(env.dir, 'fresh');
    const summary = await viaProxy(out);
    const games = (await serverData(base, token)).games.size;
    assert.ok(games > 1200, `${games} games`);
    const [me, databases, exported, page, again, ...rest] = proxy.requests;
    assert.deepEqual(
      [me, databases, exported, again, rest],
      [
        'GET /api/v1/me',
        'GET /api/v1/databases',
        'GET /api/v1/games?format=ndjson',
        'GET /api/v1/databases',
        [],
      ],
      proxy.requests.join('\n'),
    );
    assert.match(page ?? '', /^GET \/api\/v1\/changes\?cursor=[^&]+&limit=500&expand=game$/);
    assert.deepEqual(
      [summary.resumed, summary.exportedGames, summary.gamesUpserted, summary.pages, summary.changes],
      [false, games, games, 1, 0],
    );
    assert.deepEqual([summary.detailRequests, summary.mirrorGames, summary.mirrorDatabases], [0, games, 2]);
    assertSameData(mirrorData(out), await serverData(base, token), 'after the take-over');

    // The next run continues from the cursor the take-over stored: no export.
    proxy.requests.length = 0;
    const next = await viaProxy(out);
    assert.deepEqual([next.resumed, next.exportedGames, next.pages, next.changes], [true, 0, 1, 0]);
    assert.ok(!proxy.requests.some((line) => line.includes('format=')), proxy.requests.join('\n'));
  });

  test('the human summary says the games came from one export', async () => {
    const human = await cliInProcess(env, [
      'sync',
      '--base-url',
      server.base,
      '--token',
      token,
      '--out',
      join(env.dir, 'human'),
    ]);
    assert.equal(human.code, 0, human.stderr);
    const games = (await serverData(base, token)).games.size;
    assert.ok(
      human.stdout.includes(
        `\ntook ${games} games over from one export, then followed the feed from its cursor\n`,
      ),
      human.stdout,
    );
  });

  test('writes made while the export streams reach the mirror through the feed from its cursor', async () => {
    const before = await serverData(base, token);
    const ids = [...before.games.keys()];
    const [updated, moved, deleted] = ids.slice(5, 8) as [string, string, string];
    const classics = before.databases.find((database) => database.name === 'Classics');
    assert.ok(classics);
    let held = false;
    /** The writes, made once the export's answer has come (its snapshot is taken). */
    const writers = async () => {
      await importInto(env, 'alice', 'Main', writePgn(env.dir, 'during.pgn', numberedGames('During', 3)));
      await importInto(env, 'alice', 'Later', writePgn(env.dir, 'later.pgn', numberedGames('Later', 2)));
      const update = writePgn(env.dir, 'update.pgn', [
        { white: 'Updated', black: 'During Export', result: '0-1' },
      ]);
      assert.equal((await cliInProcess(env, ['games', 'update', updated, update])).code, 0);
      assert.equal((await cliInProcess(env, ['games', 'move', moved, '--database', 'Classics'])).code, 0);
      assert.equal((await cliInProcess(env, ['games', 'delete', deleted])).code, 0);
    };
    // The export's answer is handed to the sync at once, its body held until the writers are done: the sync
    // reads no game before they have written.
    const fetchHolding: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (held || !String(input).includes('format=ndjson') || !response.body) return response;
      held = true;
      const reader = response.body.getReader();
      let written: Promise<void> | undefined;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          written ??= writers();
          await written;
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      const { status, statusText, headers } = response;
      return new Response(body, { status, statusText, headers });
    };
    const dir = join(env.dir, 'during');
    mkdirSync(dir, { recursive: true });
    const mirror = new Mirror(join(dir, 'mirror.sqlite'));
    let summary: Omit<SyncSummary, 'elapsedMs'>;
    try {
      const files = { tokens: join(dir, 'oauth-tokens.json'), pgnFolder: join(dir, 'pgn') };
      summary = await new SyncRun({ baseUrl: server.base, token, fetch: fetchHolding }, mirror, files).run();
    } finally {
      mirror.close();
    }
    assert.ok(held, 'the export was asked for');
    assert.equal(
      summary.exportedGames,
      before.games.size,
      'the export is the snapshot from before the writes',
    );
    // 5 imported, 1 updated, 1 moved, 1 deleted: each one change of the feed after the cursor.
    assert.equal(summary.changes, 8);
    assert.equal(summary.gamesDeleted, 1);
    const after = await serverData(base, token);
    assert.equal(after.games.size, before.games.size + 5 - 1);
    assertSameData(mirrorData(dir), after, 'after writes during the export');
  });

  test('a take-over killed mid-export starts again on the next run and ends equal to the server', async (t) => {
    const out = join(env.dir, 'killed');
    const counts: number[] = [];
    /** The game the last killed run wrote that was deleted on the server since. */
    let deleted: string | undefined;
    for (const games of [100, 250]) {
      const { promise: released, resolve: release } = Promise.withResolvers<void>();
      holdAfter = { lines: games + 100, released };
      const run = spawnSync(env, ['--base-url', proxy.base, '--token', token, '--out', out, '--limit', '20']);
      let finished = false;
      void run.exited.then(() => {
        finished = true;
      });
      // The games of the last killed run count only once this run's take-over has dropped them (a kill that
      // came late may have left more than `games`).
      const started = () => deleted === undefined || !mirrorHolds(out, deleted);
      while (!finished && !(started() && mirroredCount(out) >= games))
        await new Promise((resolve) => setTimeout(resolve, 10));
      run.child.kill('SIGKILL');
      const exit = await run.exited;
      release();
      holdAfter = undefined;
      assert.equal(exit.signal, 'SIGKILL', `the sync was still running at ${games} games: ${exit.stderr}`);
      counts.push(mirroredCount(out));
      // While no sync runs: a game the killed run wrote is deleted; the next take-over must not keep it.
      const written = [...mirrorData(out).games.keys()];
      deleted = written[1] as string;
      assert.equal((await cliInProcess(env, ['games', 'delete', deleted])).code, 0);
    }
    t.diagnostic(`killed with ${counts.join(', ')} games mirrored`);
    const expectedTotal = (await serverData(base, token)).games.size;
    assert.ok((counts.at(-1) as number) < expectedTotal, 'the last kill came before the end of the export');
    const final = await cliJson<SyncSummary>(env, [
      'sync',
      '--base-url',
      proxy.base,
      '--token',
      token,
      '--out',
      out,
      '--limit',
      '20',
    ]);
    assert.equal(final.resumed, false, 'no cursor was stored: the take-over started again');
    assert.equal(final.exportedGames, expectedTotal);
    assertSameData(mirrorData(out), await serverData(base, token), 'after the kills');
  });

  test('a server without the export (it refuses format=ndjson) is taken over through the feed', async () => {
    older = true;
    try {
      proxy.requests.length = 0;
      const out = join(env.dir, 'older');
      const summary = await viaProxy(out);
      assert.equal(proxy.requests.filter((line) => line.includes('format=ndjson')).length, 1);
      assert.equal(summary.exportedGames, 0);
      assert.ok(summary.pages >= 3, `${summary.pages} feed pages`);
      assertSameData(mirrorData(out), await serverData(base, token), 'through the feed');
    } finally {
      older = false;
    }
  });

  test("another user's games are in no export of alice's", async () => {
    const mirrored = mirrorData(join(env.dir, 'fresh'));
    const bob = await issue(env, 'bob');
    const bobs = await http<{ data: { id: string }[] }>(base, '/games?limit=200', { token: bob });
    assert.equal(bobs.json.data.length, 20);
    for (const game of bobs.json.data) assert.equal(mirrored.games.has(game.id), false);
  });
});
