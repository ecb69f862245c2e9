// `chessport sync` end to end, as an integrator runs it: a real server, data changed only through the CLI,
// the mirror compared game for game with what the API serves. Also: SIGKILL at several points and a rerun,
// a 429 storm, 401/403 and a rotated server secret with their exit codes. owner.test.ts: whose a mirror is.
// The syncs, the CLI's writes and the servers run in the test's process (cliInProcess, cliJson,
// serveInProcess): their subject is the mirror, the summary, the message and the exit code. Child processes
// stay for the first suite's server (startServer: it restarts on its own port with another secret), the syncs
// killed with SIGKILL mid-run (spawnSync: the kill is the subject), and cliBothWays, which checks that the
// real binary prints what the in-process run prints, for a refused token (exit 3) and a refused option.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SyncSummary } from '@chessport/sync';
import Sqlite from 'better-sqlite3';
import packageJson from '../../package.json' with { type: 'json' };
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  cliBothWays,
  cliJson,
  type Env,
  http,
  type Server,
  startServer,
  tempEnv,
} from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  assertPgnFiles,
  assertSameData,
  mirrorData,
  mirroredCount,
  serverData,
} from '../helpers/mirror-check.ts';
import { type RecordingProxy, recordingProxy, upstreamJson } from '../helpers/recording-proxy.ts';
import { spawnSync } from '../helpers/sync-processes.ts';
import { importInto, issue, syncArgs } from '../helpers/sync-setup.ts';
import { ALICE_PGN, CLASSICS_PGN } from '../helpers/world.ts';

describe('a mirror that follows the server through imports, updates, moves and deletes', () => {
  let env: Env;
  let server: Server;
  let base: string;
  let token: string;
  let out: string;
  let main: { id: string; slug: string };

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['users', 'add', 'bob']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    main = await importInto(env, 'alice', 'Main', ALICE_PGN);
    await importInto(env, 'alice', 'Main', writePgn(env.dir, 'seed.pgn', numberedGames('Seed', 30)));
    await importInto(env, 'alice', 'Classics', CLASSICS_PGN);
    await importInto(env, 'bob', 'Bob Games', CLASSICS_PGN);
    token = await issue(env, 'alice');
    server = await startServer(env);
    base = `${server.base}/api/v1`;
    out = join(env.dir, 'mirror');
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('the first run takes the games over from the export; the mirror equals the server game for game', async () => {
    const summary = await cliJson<SyncSummary>(
      env,
      syncArgs(server, token, out, ['--limit', '7', '--pgn-files']),
    );
    assert.equal(summary.resumed, false);
    assert.equal(summary.gamesUpserted, 37);
    assert.equal(summary.exportedGames, 37);
    assert.equal(summary.gamesDeleted, 0);
    assert.equal(summary.pages, 1, 'one feed page from the export’s cursor, with no change');
    assert.equal(summary.mirrorGames, 37, "only alice's games: bob's never reach her mirror");
    assert.equal(summary.mirrorDatabases, 2);
    const server1 = await serverData(base, token);
    assertSameData(mirrorData(out), server1, 'after the backfill');
    await assertPgnFiles(out, base, token, server1.databases);
  });

  test('after imports, an update, moves and deletes, the next run continues from the cursor to an equal mirror', async () => {
    const before = await serverData(base, token);
    const [a, b, c, d] = [...before.games.values()].filter((g) => g.databaseId === main.id).map((g) => g.id);
    assert.ok(a && b && c && d);
    await importInto(env, 'alice', 'Main', writePgn(env.dir, 'later.pgn', numberedGames('Later', 5)));
    await importInto(env, 'alice', 'Third', writePgn(env.dir, 'third.pgn', numberedGames('Third', 3)));
    const update = writePgn(env.dir, 'update.pgn', [
      { white: 'Updated White', black: 'Updated Black', result: '0-1' },
    ]);
    const writes = [
      ['games', 'update', a, update],
      ['games', 'move', b, '--database', 'Classics'],
      ['games', 'move', c, '--database', 'Third'],
      ['games', 'delete', d],
      // Every game of Classics becomes a tombstone, the one moved there a moment ago too.
      ['databases', 'delete', 'Classics', '--user', 'alice'],
    ];
    for (const args of writes) assert.equal((await cliInProcess(env, args)).code, 0, args.join(' '));

    const summary = await cliJson<SyncSummary>(
      env,
      syncArgs(server, token, out, ['--limit', '7', '--pgn-files']),
    );
    assert.equal(summary.resumed, true);
    assert.equal(
      summary.gamesUpserted,
      5 + 3 + 2,
      'the new games, the updated one and the one moved to Third',
    );
    assert.equal(summary.gamesDeleted, 1 + 4 + 1, 'the deleted game, the Classics and the game moved there');
    const after = await serverData(base, token);
    const mirror = mirrorData(out);
    assertSameData(mirror, after, 'after the second run');
    assert.equal(mirror.games.get(a)?.white.name, 'Updated White');
    assert.equal(mirror.games.has(b) || mirror.games.has(d), false);
    assert.deepEqual(mirror.databases.map((db) => db.name).sort(), ['Main', 'Third']);
    await assertPgnFiles(out, base, token, after.databases);
  });

  test('a run with nothing new reads one page and changes nothing', async () => {
    const before = mirrorData(out);
    const summary = await cliJson<SyncSummary>(env, syncArgs(server, token, out));
    assert.deepEqual(
      [summary.pages, summary.changes, summary.gamesUpserted, summary.gamesDeleted],
      [1, 0, 0, 0],
    );
    assert.deepEqual(mirrorData(out), before);
  });

  test('--since starts a first run at a time instead of a backfill, and only a first run', async () => {
    const later = join(env.dir, 'since');
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const summary = await cliJson<SyncSummary>(env, syncArgs(server, token, later, ['--since', future]));
    assert.deepEqual([summary.changes, summary.mirrorGames, summary.mirrorDatabases], [0, 0, 2]);
    const again = await cliInProcess(env, syncArgs(server, token, later, ['--since', future]));
    assert.equal(again.code, 1);
    assert.match(again.stderr, /--since only applies to a first run/);
  });

  test('a --since the server refuses leaves the folder to any reader: nothing is claimed', async () => {
    const typo = join(env.dir, 'since-typo');
    const refused = await cliInProcess(env, syncArgs(server, token, typo, ['--since', '2026-11-21']));
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /^chessport sync: the server answered 400 invalid_request: since must be/);
    // Bob's token is another reader: had the first run claimed the folder for alice, this would be exit 6.
    const bob = await cliJson<SyncSummary>(env, syncArgs(server, await issue(env, 'bob'), typo));
    assert.deepEqual([bob.resumed, bob.mirrorGames], [false, 4]);
  });

  test('the human summary names pages, upserts, deletions and time', async () => {
    const result = await cliInProcess(env, syncArgs(server, token, out));
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^synced 1 page, 0 changes: 0 games upserted, 0 deleted in \d+\.\ds \(continued\)\n/,
    );
    assert.match(result.stdout, /mirror: \d+ games in 2 databases, .*mirror\.sqlite/);
  });

  test('a new mirror is its owner’s only, whatever the umask: it holds private games; a PGN file keeps its mode', async () => {
    const mirror = join(env.dir, 'private', 'mirror');
    const modeOf = (path: string) => statSync(path).mode & 0o777;
    const umask = process.umask(0o002); // the commands run in this process, under this umask
    try {
      await cliJson(env, syncArgs(server, token, mirror, ['--pgn-files']));
      const files = readdirSync(mirror).filter((name) => name !== 'pgn');
      assert.ok(files.includes('mirror.sqlite') && files.includes('sync.lock'), files.join(', '));
      for (const folder of [join(env.dir, 'private'), mirror, join(mirror, 'pgn')])
        assert.equal(modeOf(folder), 0o700, folder);
      for (const name of files) assert.equal(modeOf(join(mirror, name)), 0o600, name);
      const [shared, ...others] = readdirSync(join(mirror, 'pgn'));
      assert.ok(shared && others.length > 0);
      for (const name of [shared, ...others]) assert.equal(modeOf(join(mirror, 'pgn', name)), 0o600, name);
      // The owner shares one with a group: the next run's file, which replaces it, keeps that.
      chmodSync(join(mirror, 'pgn', shared), 0o640);
      await cliJson(env, syncArgs(server, token, mirror, ['--pgn-files']));
      assert.equal(modeOf(join(mirror, 'pgn', shared)), 0o640);
      for (const name of others) assert.equal(modeOf(join(mirror, 'pgn', name)), 0o600, name);
    } finally {
      process.umask(umask);
    }
  });

  test('401 (revoked token) exits 3 and 403 (missing scope) exits 4, with a clear message, mirror untouched', async () => {
    const before = mirrorData(out);
    const revoked = await issue(env, 'alice');
    await cliJson(env, ['tokens', 'revoke', revoked]);
    const refused = await cliBothWays(env, syncArgs(server, revoked, out));
    assert.equal(refused.code, 3);
    assert.match(refused.stderr, /^chessport sync: the server refused the token \(401 invalid_token\)/);
    assert.match(refused.stderr, /Get a new token/);
    const gamesOnly = await issue(env, 'alice', 'games.read');
    const forbidden = await cliInProcess(env, syncArgs(server, gamesOnly, out));
    assert.equal(forbidden.code, 4);
    assert.match(forbidden.stderr, /\(403 insufficient_scope\).*databases\.read/);
    assert.doesNotMatch(refused.stderr + forbidden.stderr, /\n\s+at /, 'no stack trace');
    assert.deepEqual(mirrorData(out), before);
    const help = await cliInProcess(env, ['sync', '--help']);
    assert.match(
      help.stdout,
      /Exit codes:[\s\S]*3 +401 invalid_token[\s\S]*4 +403 insufficient_scope[\s\S]*6 +the folder is the mirror of another reader/,
    );
  });

  test('a second sync on the same folder is refused while one runs', async () => {
    // Holds the lock a running sync holds.
    const lock = new Sqlite(join(out, 'sync.lock'));
    lock.exec('begin exclusive');
    try {
      const busy = await cliInProcess(env, syncArgs(server, token, out));
      assert.equal(busy.code, 1);
      assert.match(busy.stderr, /another chessport sync is running/);
    } finally {
      lock.exec('rollback');
      lock.close();
    }
  });

  test('a rotated server secret changes the reader: exit 6, --full refuses, --full --switch-reader starts over', async () => {
    const port = Number(new URL(server.base).port);
    await server.stop();
    // The same port: a restarted server must keep its address, or the mirror would rightly refuse to follow it.
    server = await startServer(env, { CHESSPORT_SECRET: 'a-rotated-secret-for-the-sync-test' }, port);
    const before = mirrorData(out);
    const rejected = await cliInProcess(env, syncArgs(server, token, out));
    assert.equal(rejected.code, 6);
    assert.match(
      rejected.stderr,
      /the server's secret was changed.*Nothing was written.*--full --switch-reader/,
    );
    // The reader id the mirror records is gone with the old secret: to the sync this is another reader.
    const full = await cliInProcess(env, syncArgs(server, token, out, ['--full']));
    assert.equal(full.code, 6, full.stderr);
    assert.deepEqual(mirrorData(out), before);
    const summary = await cliJson<SyncSummary>(
      env,
      syncArgs(server, token, out, ['--full', '--switch-reader']),
    );
    assert.equal(summary.resumed, false);
    assertSameData(mirrorData(out), await serverData(base, token), 'after --full --switch-reader');
  });
});

describe('a sync killed with SIGKILL and run again', () => {
  const GAMES = 2000;
  let env: Env;
  let server: InProcessServer;
  let base: string;
  let token: string;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'alice', 'Big', writePgn(env.dir, 'big.pgn', numberedGames('Big', GAMES * 0.75)));
    await importInto(
      env,
      'alice',
      'Other',
      writePgn(env.dir, 'other.pgn', numberedGames('Other', GAMES * 0.25)),
    );
    token = await issue(env, 'alice');
    server = await serveInProcess(env);
    base = `${server.base}/api/v1`;
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  /**
   * Starts a sync and kills it once the mirror holds at least `games` games. The first run goes through the
   * feed (`--since` a time before every game) rather than the export, whose take-over starts again when
   * interrupted (takeover.test.ts): this is the feed's resumption, a page at a time.
   */
  async function killWhenMirrored(out: string, games: number, extra: string[] = []): Promise<number> {
    const run = spawnSync(
      env,
      syncArgs(server, token, out, ['--limit', '20', '--concurrency', '2', '--pgn-files', ...extra]).slice(1),
    );
    let finished = false;
    void run.exited.then(() => {
      finished = true;
    });
    while (!finished && mirroredCount(out) < games) await new Promise((r) => setTimeout(r, 10));
    run.child.kill('SIGKILL');
    const exit = await run.exited;
    assert.equal(exit.signal, 'SIGKILL', `the sync was still running at ${games} games: ${exit.stderr}`);
    return mirroredCount(out);
  }

  test('ends with the same mirror as the server, with writes in between', async (t) => {
    const out = join(env.dir, 'mirror');
    const counts: number[] = [];
    counts.push(await killWhenMirrored(out, 150, ['--since', '2000-01-01T00:00:00Z']));
    counts.push(await killWhenMirrored(out, 700));
    // While no sync runs: delete games already mirrored, update one, move one.
    const mirrored = [...mirrorData(out).games.keys()];
    for (const id of mirrored.slice(0, 5))
      assert.equal((await cliInProcess(env, ['games', 'delete', id])).code, 0);
    const update = writePgn(env.dir, 'update.pgn', [
      { white: 'Changed While Down', black: 'Someone', result: '1-0' },
    ]);
    assert.equal((await cliInProcess(env, ['games', 'update', mirrored[10] as string, update])).code, 0);
    assert.equal(
      (await cliInProcess(env, ['games', 'move', mirrored[11] as string, '--database', 'Other'])).code,
      0,
    );
    counts.push(await killWhenMirrored(out, 1300));
    t.diagnostic(`killed with ${counts.join(', ')} games mirrored`);
    for (let i = 1; i < counts.length; i++) {
      assert.ok(
        (counts[i] as number) > (counts[i - 1] as number) - 5,
        'each run continued where the last stopped',
      );
    }
    assert.ok((counts.at(-1) as number) < GAMES - 5, 'the last kill came before the end');

    const final = await cliJson<SyncSummary>(
      env,
      syncArgs(server, token, out, ['--limit', '20', '--pgn-files']),
    );
    assert.equal(final.resumed, true);
    assert.ok(
      final.gamesUpserted < GAMES / 2,
      `the last run did not start over (${final.gamesUpserted} upserts)`,
    );
    const expected = await serverData(base, token);
    assert.equal(expected.games.size, GAMES - 5);
    assertSameData(mirrorData(out), expected, 'after the kills');
    await assertPgnFiles(out, base, token, expected.databases);
    assert.deepEqual(
      readdirSync(join(out, 'pgn')).filter((name) => name.includes('.tmp-')),
      [],
      'no temp file left behind',
    );

    // The same data synced in one go gives the same mirror.
    const fresh = join(env.dir, 'fresh');
    await cliJson(env, syncArgs(server, token, fresh, ['--limit', '200']));
    assertSameData(mirrorData(fresh), mirrorData(out), 'killed and resumed vs. one run');
  });
});

describe('a 429 storm', () => {
  let env: Env;
  let limited: InProcessServer;
  let unlimited: InProcessServer;
  let token: string;

  before(async () => {
    env = tempEnv();
    await cliJson(env, ['users', 'add', 'carol']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'carol', 'Storm', writePgn(env.dir, 'storm.pgn', numberedGames('Storm', 12)));
    token = await issue(env, 'carol');
    limited = await serveInProcess(env, { RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW: '1s' });
    unlimited = await serveInProcess(env, { RATE_LIMIT_MAX: '1000000' });
  });
  after(async () => {
    await limited?.stop();
    await unlimited?.stop();
    env?.cleanup();
  });

  test('slows the sync down but does not fail it', async () => {
    const out = join(env.dir, 'mirror');
    const started = performance.now();
    // Through the feed (--since a time before every game; a take-over from the export is one request):
    // /me, the check of --since, /databases, 12 pages of one game and /databases again at 4 per second.
    const summary = await cliJson<SyncSummary>(
      env,
      syncArgs(limited, token, out, ['--limit', '1', '--since', '2000-01-01T00:00:00Z']),
    );
    const seconds = (performance.now() - started) / 1000;
    assert.ok(summary.rateLimitWaits > 0, 'the limit was hit');
    assert.ok(summary.rateLimitWaitMs >= 1000);
    assert.ok(seconds >= 2.5, `16 requests at 4/s take time (took ${seconds.toFixed(1)} s)`);
    assert.equal(summary.mirrorGames, 12);
    const mirror = mirrorData(out);
    assertSameData(mirror, await serverData(`${unlimited.base}/api/v1`, token), 'after the storm');
    assert.ok(existsSync(join(out, 'mirror.sqlite')));
  });
});

describe('a proxy or server that answers what chessport would not', () => {
  let env: Env;
  let server: InProcessServer;
  let proxy: RecordingProxy;
  let token: string;
  /** The game whose feed items the proxy sends without their game, and whose first detail request it answers with its own 404 page. */
  let hidden: string | undefined;
  /** A slug the proxy gives every database in /databases, in place of the server's. */
  let slug: string | undefined;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'alice', 'Main', writePgn(env.dir, 'main.pgn', numberedGames('Main', 12)));
    token = await issue(env, 'alice');
    server = await serveInProcess(env);
    // A proxy in front of the server, as a gateway during a deploy: once, a 404 page of its own.
    proxy = await recordingProxy(server.base, async (req) => {
      const json = (body: unknown) => ({ status: 200, type: 'application/json', body: JSON.stringify(body) });
      if (hidden !== undefined && req.url?.startsWith('/api/v1/changes?')) {
        const page = await upstreamJson<{ data: { id: string; game?: unknown }[] }>(server.base, req);
        for (const item of page.data) if (item.id === hidden) delete item.game;
        return json(page);
      }
      if (hidden !== undefined && req.url === `/api/v1/games/${hidden}`) {
        hidden = undefined;
        return { status: 404, type: 'text/html', body: '<html><body>404 Not Found</body></html>' };
      }
      if (slug !== undefined && req.url === '/api/v1/databases') {
        const { data } = await upstreamJson<{ data: { slug: string }[] }>(server.base, req);
        for (const database of data) database.slug = slug;
        return json({ data });
      }
      return undefined;
    });
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
    env?.cleanup();
  });

  test('a game read from its detail answered with a proxy’s 404 fails the run rather than leaving the mirror; the next run mirrors it', async () => {
    const base = `${server.base}/api/v1`;
    const expected = await serverData(base, token);
    hidden = [...expected.games.keys()][5];
    const out = join(env.dir, 'mirror');
    const args = ['sync', '--base-url', proxy.base, '--token', token, '--out', out, '--limit', '4'];
    // Through the feed (--since a time before every game), whose items the proxy strips, not the export.
    const first = await cliInProcess(env, [...args, '--since', '2000-01-01T00:00:00Z']);
    assert.equal(first.code, 1, `the run fails: ${first.stderr}`);
    assert.match(first.stderr, /404/);
    assert.equal(hidden, undefined, 'the proxy answered its 404');
    const second = await cliInProcess(env, [...args, '--json']);
    assert.equal(second.code, 0, second.stderr);
    assertSameData(mirrorData(out), expected, 'after the proxy’s 404');
  });

  test('--pgn-files refuses a slug that is not a plain file name, and writes nothing outside the folder', async () => {
    const out = join(env.dir, 'slugs');
    const args = ['sync', '--base-url', proxy.base, '--token', token, '--out', out, '--pgn-files'];
    for (const bad of ['../escaped', '.hidden', 'a/b']) {
      slug = bad;
      const run = await cliInProcess(env, args);
      assert.equal(run.code, 1, `${bad}: ${run.stderr}`);
      assert.match(run.stderr, /is not a plain file name: no PGN file was written/);
    }
    assert.equal(existsSync(join(out, 'escaped.pgn')), false);
    assert.equal(existsSync(join(out, 'pgn')), false);
    slug = undefined;
    assert.equal((await cliInProcess(env, args)).code, 0);
    assert.deepEqual(readdirSync(join(out, 'pgn')), ['main.pgn']);
  });
});

describe('one request per feed page, each with its games', () => {
  let env: Env;
  let server: InProcessServer;
  let token: string;
  /** Whether the proxy plays an older server, which refuses expand like any unknown parameter. */
  let older = false;
  /** Games whose feed items the proxy sends without their game. */
  const stripped = new Set<string>();
  /** Whether the proxy refuses the NDJSON export, as a server older than it does: the take-over is the feed's. */
  let noExport = false;
  let proxy: RecordingProxy;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'erin']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'erin', 'Main', writePgn(env.dir, 'main.pgn', numberedGames('Main', 1200)));
    await importInto(env, 'erin', 'Side', writePgn(env.dir, 'side.pgn', numberedGames('Side', 100)));
    token = await issue(env, 'erin');
    server = await serveInProcess(env);
    proxy = await recordingProxy(server.base, async (req) => {
      const url = new URL(req.url ?? '/', 'http://proxy');
      if ((older || noExport) && url.searchParams.get('format') === 'ndjson')
        return {
          status: 400,
          type: 'application/json',
          body: JSON.stringify({
            error: 'invalid_request',
            error_description: 'querystring/format must be equal to one of the allowed values',
          }),
        };
      if (url.pathname !== '/api/v1/changes') return undefined;
      if (older && url.searchParams.has('expand'))
        return {
          status: 400,
          type: 'application/json',
          body: JSON.stringify({ error: 'invalid_request', error_description: 'unknown parameter "expand"' }),
        };
      if (stripped.size === 0) return undefined;
      const page = await upstreamJson<{ data: { id: string; game?: unknown }[] }>(server.base, req);
      for (const item of page.data) if (stripped.has(item.id)) delete item.game;
      return { status: 200, type: 'application/json', body: JSON.stringify(page) };
    });
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
    env?.cleanup();
  });

  /** The requests of one sync through the proxy, by kind. */
  async function syncThroughProxy(out: string, extra: string[] = []) {
    proxy.requests.length = 0;
    proxy.headers.length = 0;
    const args = ['sync', '--base-url', proxy.base, '--token', token, '--out', out, ...extra];
    const summary = await cliJson<SyncSummary>(env, args);
    const kinds = { me: 0, databases: 0, exports: 0, pages: 0, details: 0, other: 0 };
    for (const line of proxy.requests) {
      if (line === 'GET /api/v1/me') kinds.me++;
      else if (line === 'GET /api/v1/databases') kinds.databases++;
      else if (line === 'GET /api/v1/games?format=ndjson') kinds.exports++;
      else if (line.startsWith('GET /api/v1/changes?')) kinds.pages++;
      else if (/^GET \/api\/v1\/games\/[^/?]+$/.test(line)) kinds.details++;
      else kinds.other++;
    }
    return { summary, kinds };
  }

  test('a take-over of 1,300 games sends /me, /databases, one export, one feed page and /databases', async () => {
    const out = join(env.dir, 'export');
    const { summary, kinds } = await syncThroughProxy(out);
    assert.deepEqual(kinds, { me: 1, databases: 2, exports: 1, pages: 1, details: 0, other: 0 });
    assert.deepEqual([summary.exportedGames, summary.pages, summary.detailRequests], [1300, 1, 0]);
    assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, token), 'after the take-over');
  });

  test('through the feed (a server without the export), 1,300 games are /me, /databases, 3 pages with expand=game and /databases: no game detail', async () => {
    noExport = true;
    const out = join(env.dir, 'mirror');
    const { summary, kinds } = await syncThroughProxy(out).finally(() => {
      noExport = false;
    });
    assert.deepEqual(kinds, { me: 1, databases: 2, exports: 1, pages: 3, details: 0, other: 0 });
    assert.ok(
      proxy.requests
        .filter((line) => line.includes('/changes?'))
        .every((line) => /[?&]limit=500&expand=game$/.test(line)),
      proxy.requests.join('\n'),
    );
    assert.deepEqual([summary.pages, summary.gamesUpserted, summary.detailRequests], [3, 1300, 0]);
    assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, token), 'after the backfill');
  });

  test('its requests name the sync; a server on this machine is asked for uncompressed answers unless told', async () => {
    const agents = (headers: IncomingHttpHeaders[]) => new Set(headers.map((h) => h['user-agent']));
    const encodings = (headers: IncomingHttpHeaders[]) => new Set(headers.map((h) => h['accept-encoding']));
    await syncThroughProxy(join(env.dir, 'auto'));
    assert.deepEqual(agents(proxy.headers), new Set([`chessport-sync/${packageJson.version}`]));
    assert.deepEqual(encodings(proxy.headers), new Set(['identity']), 'the proxy listens on 127.0.0.1');
    const compressed = await syncThroughProxy(join(env.dir, 'compressed'), ['--compression', 'on']);
    assert.deepEqual(encodings(proxy.headers), new Set(['gzip, deflate']));
    assertSameData(mirrorData(join(env.dir, 'compressed')), mirrorData(join(env.dir, 'auto')), 'compressed');
    assert.equal(compressed.summary.mirrorGames, 1300);
    await syncThroughProxy(join(env.dir, 'plain'), ['--compression', 'off']);
    assert.deepEqual(encodings(proxy.headers), new Set(['identity']));
    const wrong = await cliBothWays(
      env,
      syncArgs(server, token, join(env.dir, 'x'), ['--compression', 'yes']),
    );
    assert.equal(wrong.code, 1);
    assert.equal(wrong.stderr, 'chessport: --compression must be auto, on or off\n');
  });

  test('an item that comes without its game (a proxy dropped it) is read from its detail, that one only', async () => {
    const out = join(env.dir, 'stripped');
    const listed = (
      await http<{ data: { id: string }[] }>(`${server.base}/api/v1`, '/games?limit=3', { token })
    ).json.data;
    for (const game of listed) stripped.add(game.id);
    noExport = true;
    try {
      const { summary, kinds } = await syncThroughProxy(out);
      assert.deepEqual(kinds, { me: 1, databases: 2, exports: 1, pages: 3, details: 3, other: 0 });
      assert.equal(summary.detailRequests, 3);
      assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, token), 'with 3 details');
    } finally {
      stripped.clear();
      noExport = false;
    }
  });

  test('an older server, which refuses expand, is synced game by game; the human summary says so', async () => {
    older = true;
    try {
      const out = join(env.dir, 'older');
      const { summary, kinds } = await syncThroughProxy(out, ['--limit', '200', '--concurrency', '8']);
      // The first page is asked with expand=game once, refused, and asked again without it.
      assert.deepEqual(kinds, { me: 1, databases: 2, exports: 1, pages: 1 + 7, details: 1300, other: 0 });
      assert.equal(summary.detailRequests, 1300);
      assertSameData(
        mirrorData(out),
        await serverData(`${server.base}/api/v1`, token),
        'from an older server',
      );
      const human = await cliInProcess(env, [
        'sync',
        '--base-url',
        proxy.base,
        '--token',
        token,
        '--out',
        join(env.dir, 'older2'),
        '--limit',
        '500',
      ]);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /\nread 1300 games one by one: the feed sent their changes without them/);
    } finally {
      older = false;
    }
  });
});
