// Long-polls through the client: changes({ wait }) is held by the server until a change commits (a CLI import)
// and is not cut by the client's own timeout, which the wait lengthens; feed({ wait }) follows the feed past
// its end, yielding each change as it commits, until its signal aborts. The server runs in the test's process
// (serveInProcess).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ChangesPage, ChessportClient } from '../../packages/client/src/index.ts';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { waitingAtLeast } from '../helpers/long-poll.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';

describe('the client’s long-polls', () => {
  let env: Env;
  let server: InProcessServer;
  let token: string;
  /** The query of every request the client sent. */
  const asked: string[] = [];
  let client: ChessportClient;
  let imports = 0;

  /** Imports n new games of Erin's through the CLI. */
  const importGames = (n: number) =>
    importInto(
      env,
      'erin',
      'Main',
      writePgn(env.dir, `more-${++imports}.pgn`, numberedGames(`More ${imports}`, n)),
    );

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'erin']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importGames(3);
    token = await issue(env, 'erin');
    server = await serveInProcess(env);
    client = new ChessportClient({
      baseUrl: server.base,
      token,
      // Shorter than the waits below: the client must lengthen it by the wait, or each would time out.
      retry: { timeoutMs: 1000, maxRetries: 0 },
      fetch: (input, init) => {
        asked.push(new URL(String(input)).search);
        return fetch(input, init);
      },
    });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('changes({ wait }) answers with the change that a CLI import commits while it waits', async () => {
    const head = await client.changes({ limit: 500 });
    const held = client.changes({ cursor: head.nextCursor, wait: 30 });
    await waitingAtLeast(server.base, 1);
    await importGames(2);
    const page = await held;
    assert.equal(page.data.length, 2);
    assert.equal(page.hasMore, false);
    assert.match(asked.at(-1) ?? '', /[?&]wait=30(&|$)/);
  });

  test('changes({ wait }) that sees nothing ends with the empty page after its wait, not with a timeout', async () => {
    const head = await client.changes({ limit: 500 });
    const started = Date.now();
    const page = await client.changes({ cursor: head.nextCursor, wait: 2 });
    assert.deepEqual(page.data, []);
    assert.equal(page.nextCursor, head.nextCursor);
    assert.ok(Date.now() - started >= 1900, 'the server held it for its wait');
  });

  test('feed({ wait }) reads the backlog, then yields each change as it commits, until aborted', async () => {
    const stop = new AbortController();
    const pages: ChangesPage[] = [];
    const seen = new Set<string>();
    const iterate = (async () => {
      for await (const page of client.feed({ limit: 2, wait: 30 }, { signal: stop.signal })) {
        pages.push(page);
        for (const item of page.data) seen.add(item.id);
      }
    })();
    const settled = iterate.then(
      () => 'ended' as const,
      (error: unknown) => error,
    );
    // The backlog (5 games in pages of 2), then a long-poll at its end.
    await waitingAtLeast(server.base, 1);
    assert.equal(seen.size, 5);
    assert.equal(pages.at(-1)?.hasMore, false);
    await importGames(1);
    await waitingAtLeast(server.base, 1);
    const until = Date.now() + 10_000;
    while (seen.size < 6 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.equal(seen.size, 6, 'the new game came without a new call');
    stop.abort(new Error('enough'));
    const outcome = await settled;
    assert.ok(outcome instanceof Error && outcome.message === 'enough', 'it ends with the abort');
    assert.ok(asked.filter((query) => query.includes('wait=30')).length >= 2);
  });
});
