// The steps of a sync run (packages/sync/src/run.ts), each called alone in this process against a real
// server, its data changed through the CLI: `open` (whose mirror, the claim), `catchUp` (the pages to the end
// of the feed), `readPage` (an older server's refusals), `apply` (one page, with the details its items lack),
// `settle` (databases and PGN files) and `watch`. The runs end to end, through the command, are in
// sync.test.ts, owner.test.ts and watch.test.ts. The CLI's writes and the server (serveInProcess) run in the
// test's process too (cliInProcess, cliJson): no child process starts.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SyncCurrent } from '@chessport/sync';
import type { RetryEvent } from '../../packages/client/src/index.ts';
import { RetryTally } from '../../packages/sync/src/retries.ts';
import type { RunOptions } from '../../packages/sync/src/run.ts';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { assertPgnFiles, assertSameData, mirrorData, serverData } from '../helpers/mirror-check.ts';
import { type RecordingProxy, recordingProxy } from '../helpers/recording-proxy.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';
import { Mirror, SyncError, SyncRun } from '../helpers/workspace-sources.ts';

type MirrorFile = InstanceType<typeof Mirror>;

/** A SyncError's reason, for assert.rejects. */
const failsWith = (reason: string) => (error: unknown) => {
  assert.ok(error instanceof SyncError, String(error));
  assert.equal(error.reason, reason);
  return true;
};

describe('the steps of a sync run, each alone against a real server', () => {
  let env: Env;
  let server: InProcessServer;
  let base: string;
  /** Tokens of users with 5 games in Main (alice), none (bob), 3 (carol), 2 (dave) and 1 (erin). */
  const tokens: Record<string, string> = {};
  /** A proxy in front of the server that plays an older one, which knows neither expand nor wait. */
  let proxy: RecordingProxy;
  const mirrors: MirrorFile[] = [];

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['apps', 'add', 'mirror']);
    const games = { alice: 5, bob: 0, carol: 3, dave: 2, erin: 1 };
    for (const [user, count] of Object.entries(games)) {
      await cliJson(env, ['users', 'add', user]);
      if (count > 0)
        await importInto(env, user, 'Main', writePgn(env.dir, `${user}.pgn`, numberedGames(user, count)));
      tokens[user] = await issue(env, user);
    }
    server = await serveInProcess(env);
    base = `${server.base}/api/v1`;
    proxy = await recordingProxy(server.base, async (req) => {
      const url = new URL(req.url ?? '/', 'http://proxy');
      const unknown = ['expand', 'wait'].find((name) => url.searchParams.has(name));
      if (url.pathname !== '/api/v1/changes' || unknown === undefined) return undefined;
      return {
        status: 400,
        type: 'application/json',
        body: JSON.stringify({
          error: 'invalid_request',
          error_description: `unknown parameter "${unknown}"`,
        }),
      };
    });
  });
  after(async () => {
    for (const mirror of mirrors) mirror.close();
    await proxy?.close();
    await server?.stop();
    env?.cleanup();
  });

  /** A mirror in a folder of its own, and a run over it of `user`'s token. */
  function start(folder: string, user: string, options: Partial<RunOptions> = {}) {
    const dir = join(env.dir, folder);
    mkdirSync(dir, { recursive: true });
    const mirror = new Mirror(join(dir, 'mirror.sqlite'));
    mirrors.push(mirror);
    const run = runOver(mirror, dir, user, options);
    return { dir, mirror, run };
  }

  function runOver(mirror: MirrorFile, dir: string, user: string, options: Partial<RunOptions> = {}) {
    const files = { tokens: join(dir, 'oauth-tokens.json'), pgnFolder: join(dir, 'pgn') };
    return new SyncRun({ baseUrl: server.base, token: tokens[user], ...options }, mirror, files);
  }

  test("open: claims a new mirror for the token's reader at this server, with its databases, and starts at the beginning", async () => {
    const { run, mirror } = start('open', 'alice');
    assert.deepEqual(await run.open(), { since: undefined });
    const me = (await http<{ data: { id: string } }>(base, '/me', { token: tokens.alice })).json.data;
    assert.equal(mirror.getState('reader'), me.id);
    assert.equal(mirror.getState('base_url'), base);
    assert.deepEqual(
      mirror.databases().map((database) => database.name),
      ['Main'],
    );
    assert.equal(mirror.counts().games, 0, 'no game before the feed');
    assert.equal(mirror.getState('cursor'), undefined);
  });

  test('catchUp: applies the feed page by page, each with its own cursor, to the end; the next run continues there', async () => {
    const seen: { games: number; cursor: string | undefined }[] = [];
    const { run, mirror, dir } = start('catch-up', 'alice', {
      pageSize: 2,
      onPage: () => seen.push({ games: mirror.counts().games, cursor: mirror.getState('cursor') }),
    });
    const cursor = await run.catchUp(await run.open());
    assert.deepEqual(
      seen.map((page) => page.games),
      [2, 4, 5],
    );
    assert.equal(new Set(seen.map((page) => page.cursor)).size, 3, 'each page stored its own cursor');
    assert.equal(mirror.getState('cursor'), cursor);
    assertSameData(mirrorData(dir), await serverData(base, tokens.alice as string), 'after catchUp');
    const summary = run.summary();
    assert.equal(summary.resumed, false);
    assert.deepEqual(
      [summary.pages, summary.changes, summary.gamesUpserted, summary.gamesDeleted, summary.detailRequests],
      [3, 5, 5, 0, 0],
    );

    const next = runOver(mirror, dir, 'alice', { pageSize: 2 });
    assert.deepEqual(await next.open(), { cursor });
    await next.catchUp({ cursor });
    assert.deepEqual([next.summary().resumed, next.summary().pages, next.summary().changes], [true, 1, 0]);
  });

  test('catchUp: a saved cursor the server refuses is cursor_rejected, and the mirror keeps it', async () => {
    const { run, mirror, dir } = start('refused-cursor', 'alice');
    await run.open();
    mirror.setState('cursor', 'not-a-cursor');
    const next = runOver(mirror, dir, 'alice');
    const begin = await next.open();
    assert.deepEqual(begin, { cursor: 'not-a-cursor' });
    await assert.rejects(next.catchUp(begin), failsWith('cursor_rejected'));
    assert.equal(mirror.getState('cursor'), 'not-a-cursor');
    assert.equal(mirror.counts().games, 0);
  });

  test("open: another user's token is other_reader, and nothing of the mirror changes", async () => {
    const { run, mirror, dir } = start('other-reader', 'alice');
    await run.catchUp(await run.open());
    const state = () => ({
      reader: mirror.getState('reader'),
      cursor: mirror.getState('cursor'),
      counts: mirror.counts(),
      databases: mirror.databases(),
    });
    const before = state();
    await assert.rejects(runOver(mirror, dir, 'bob').open(), failsWith('other_reader'));
    await assert.rejects(runOver(mirror, dir, 'bob', { full: true }).open(), failsWith('other_reader'));
    assert.deepEqual(state(), before);
  });

  test('readPage: an older server refuses expand, so the run asks again without it, for good; apply reads each game from its detail', async () => {
    proxy.requests.length = 0;
    const { run, dir } = start('older', 'alice', { baseUrl: proxy.base, concurrency: 2 });
    const begin = await run.open();
    const first = await run.readPage({ ...begin, limit: 3 });
    const second = await run.readPage({ cursor: first.nextCursor, limit: 3 });
    assert.deepEqual(
      [...first.data, ...second.data].map((item) => item.game),
      [undefined, undefined, undefined, undefined, undefined],
    );
    const expandAsked = proxy.requests
      .filter((line) => line.startsWith('GET /api/v1/changes?'))
      .map((line) => new URL(line.slice('GET '.length), 'http://proxy').searchParams.get('expand'));
    assert.deepEqual(expandAsked, ['game', null, null], 'refused once, then never asked again');
    await run.apply(first);
    await run.apply(second);
    assert.equal(run.summary().detailRequests, 5);
    assertSameData(mirrorData(dir), await serverData(base, tokens.alice as string), 'game by game');
    await assert.rejects(
      run.readPage({ cursor: second.nextCursor, limit: 3, wait: 1 }),
      /^Error: the server does not hold requests for changes \(wait\), so --watch cannot follow it/,
    );
  });

  test('apply: items without their game are read from its detail; a game deleted since leaves the mirror', async () => {
    const { run, mirror } = start('apply', 'carol');
    const page = await run.readPage({ ...(await run.open()), limit: 10 });
    const [kept, gone, whole] = page.data;
    assert.ok(kept && gone && whole && page.data.length === 3);
    assert.ok(
      page.data.every((item) => item.game),
      'the server sends each item with its game',
    );
    delete kept.game;
    delete gone.game;
    assert.equal((await cliInProcess(env, ['games', 'delete', gone.id])).code, 0);
    await run.apply(page);
    const games = mirror.games();
    assert.deepEqual(
      games.map((game) => game.id),
      [kept.id, whole.id],
      'in page order',
    );
    const detail = await http<{ data: unknown }>(base, `/games/${kept.id}`, { token: tokens.carol });
    assert.deepEqual(games[0], detail.json.data, 'the game as its detail gives it');
    assert.equal(mirror.getState('cursor'), page.nextCursor, 'the cursor with the page');
    const summary = run.summary();
    assert.deepEqual(
      [summary.pages, summary.changes, summary.gamesUpserted, summary.gamesDeleted, summary.detailRequests],
      [1, 3, 2, 1, 2],
    );
  });

  test('settle: the databases read again, a deleted one dropped; the PGN files written, and onCurrent told', async () => {
    const currents: SyncCurrent[] = [];
    const { run, mirror, dir } = start('settle', 'dave', {
      pgnFiles: true,
      onCurrent: (current) => currents.push(current),
    });
    await run.catchUp(await run.open());
    await importInto(env, 'dave', 'Extra', writePgn(env.dir, 'extra.pgn', numberedGames('Extra', 1)));
    await run.settle();
    assert.deepEqual(
      mirror
        .databases()
        .map((database) => database.name)
        .sort(),
      ['Extra', 'Main'],
    );
    assert.deepEqual(readdirSync(join(dir, 'pgn')).sort(), ['extra.pgn', 'main.pgn']);
    assert.deepEqual(currents, [
      { pages: 1, changes: 2, gamesUpserted: 2, gamesDeleted: 0, mirrorGames: 2, mirrorDatabases: 2 },
    ]);

    assert.equal((await cliInProcess(env, ['databases', 'delete', 'Extra', '--user', 'dave'])).code, 0);
    await run.settle();
    assert.deepEqual(
      mirror.databases().map((database) => database.name),
      ['Main'],
    );
    await assertPgnFiles(
      dir,
      base,
      tokens.dave as string,
      (await serverData(base, tokens.dave as string)).databases,
    );
    assert.deepEqual(run.summary().pgnFiles, [join(dir, 'pgn/main.pgn')]);
    assert.equal(currents.length, 2);
  });

  test("watch: applies changes as they commit, settles after them, and ends with the signal's reason", {
    timeout: 60_000,
  }, async () => {
    const stop = new AbortController();
    let caughtUp: () => void = () => {};
    const current = new Promise<void>((resolve) => {
      caughtUp = resolve;
    });
    const { run, dir } = start('watch', 'erin', {
      watch: true,
      waitSeconds: 5,
      signal: stop.signal,
      onCurrent: (now) => {
        if (now.mirrorGames === 3) caughtUp();
      },
    });
    const cursor = await run.catchUp(await run.open());
    const ended = run.watch(cursor).then(
      () => assert.fail('watch returned'),
      (error: unknown) => error,
    );
    await importInto(env, 'erin', 'Main', writePgn(env.dir, 'later.pgn', numberedGames('Later', 2)));
    await current;
    const reason = new Error('enough');
    stop.abort(reason);
    assert.equal(await ended, reason);
    assertSameData(mirrorData(dir), await serverData(base, tokens.erin as string), 'while watching');
    assert.equal(run.summary().gamesUpserted, 3);
  });
});

test('RetryTally: rate-limit waits that overlap count once as wall-clock time; other retries apart', () => {
  const tally = new RetryTally();
  const event = (reason: RetryEvent['reason'], waitMs: number) =>
    ({ reason, url: 'http://chess.example.org/api/v1/me', attempt: 1, waitMs }) as RetryEvent;
  tally.count(event('rate_limited', 1000), 0);
  tally.count(event('rate_limited', 1000), 500); // until 1500: 500 more
  tally.count(event('rate_limited', 200), 600); // within the wait under way: nothing more
  tally.count(event('network', 100), 700);
  tally.count(event('unavailable', 100), 800);
  tally.count(event('rate_limited', 100.4), 5000); // on its own
  assert.deepEqual(tally.figures(), { rateLimitWaits: 4, rateLimitWaitMs: 1600, retries: 2 });
});
