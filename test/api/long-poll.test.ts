// GET /changes?wait= (issue 27): a long-poll against the real server, woken by the CLI's writes, on the store of
// this pass of the tests (SQLite, or PostgreSQL in the PostgreSQL pass). The servers run in the test's process
// (serveInProcess), and so do the CLI's commands but `tokens revoke`: each command opens the store on a
// connection of its own, so a wait hears of their commits as it hears of another process's (SQLite's change
// poller, PostgreSQL's LISTEN), never through the server's own store. A request whose page would be empty
// waits until a change of its user commits; a page with changes, shutdown, a client that leaves and the end
// of the wait all answer it at once. How long the wake-up takes is measured by `npm run bench`
// (bench/longpoll.ts); here a wait of 30 s must be answered well before its end.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  cli,
  cliJson,
  type Env,
  FIXTURES,
  http,
  importPgn,
  issueToken,
  tempEnv,
} from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  type FeedPage,
  logFrom,
  metric,
  waitForChanges,
  waitingAtLeast,
  waitingAtMost,
} from '../helpers/long-poll.ts';

const ALICE_PGN = join(FIXTURES, 'api/alice.pgn');
/** A wait far longer than any answer below may take: an answer before it came from a change, not its end. */
const LONG_WAIT = 30;
/** What "well before the end of the wait" means on a busy machine. */
const WELL_BEFORE_MS = 10_000;

async function waitFor(condition: () => boolean): Promise<void> {
  const until = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > until) throw new Error('not within 10 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The cursor at the head of the user's feed now: a wait from it has nothing to read yet. */
async function headCursor(base: string, token: string): Promise<string> {
  let cursor = '';
  for (;;) {
    const query = cursor ? `?limit=500&cursor=${encodeURIComponent(cursor)}` : '?limit=500';
    const page = await http<FeedPage>(`${base}/api/v1`, `/changes${query}`, { token });
    assert.equal(page.status, 200);
    cursor = page.json.nextCursor;
    if (!page.json.hasMore) return cursor;
  }
}

interface Readers {
  alice: string;
  bob: string;
}

/** Adds users alice and bob to env's store, each with a games.read token of the app "desktop", and serves it. */
async function startWithReaders(env: Env): Promise<{ server: InProcessServer; tokens: Readers }> {
  for (const user of ['alice', 'bob']) await cliJson(env, ['users', 'add', user]);
  await cliJson(env, ['apps', 'add', 'desktop']);
  const tokens = {
    alice: await issueToken(env, 'alice', 'desktop', 'games.read'),
    bob: await issueToken(env, 'bob', 'desktop', 'games.read'),
  };
  return { server: await serveInProcess(env), tokens };
}

describe('GET /changes?wait=', () => {
  let env: Env;
  let server: InProcessServer;
  let tokens: Readers;

  before(async () => {
    env = tempEnv();
    ({ server, tokens } = await startWithReaders(env));
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('a waiting request is answered with the change as soon as a CLI import commits it', async (t) => {
    const cursor = await headCursor(server.base, tokens.alice);
    const waiting = waitForChanges(
      server.base,
      tokens.alice,
      `wait=${LONG_WAIT}&cursor=${encodeURIComponent(cursor)}`,
    );
    await waitingAtLeast(server.base, 1);
    const imported = await importPgn(env, ALICE_PGN, 'alice', 'Wake up');
    const { status, json, at } = await waiting.answer;
    assert.equal(status, 200);
    assert.ok(json.data.length > 0, 'the page holds the imported games');
    assert.ok(
      at - waiting.sentAt < WELL_BEFORE_MS,
      `answered ${at - waiting.sentAt} ms after it was sent, while its ${LONG_WAIT} s wait was open`,
    );
    const games = await http<{ data: { id: string }[] }>(
      `${server.base}/api/v1`,
      `/databases/${imported.id}/games`,
      { token: tokens.alice },
    );
    assert.deepEqual(
      json.data.map((item) => item.id).sort(),
      games.json.data.map((game) => game.id).sort(),
      'every game of the import, each once',
    );
    // The change time is taken inside the import's transaction, just before it commits.
    const latest = Math.max(...json.data.map((item) => Date.parse(item.updatedAt)));
    t.diagnostic(`answered ${at - latest} ms after the change time of the import's transaction`);
  });

  test('a change of another user does not answer the wait: it ends with an empty page and its cursor', async () => {
    const cursor = await headCursor(server.base, tokens.alice);
    const waiting = waitForChanges(server.base, tokens.alice, `wait=2&cursor=${encodeURIComponent(cursor)}`);
    await waitingAtLeast(server.base, 1);
    await importPgn(env, ALICE_PGN, 'bob', 'Not alice');
    const { status, json } = await waiting.answer;
    assert.equal(status, 200);
    assert.deepEqual(json.data, []);
    assert.equal(json.hasMore, false);
    // The empty page's cursor continues where the request's did: an import of alice's comes next.
    await importPgn(env, ALICE_PGN, 'alice', 'After the wait');
    const next = await http<FeedPage>(
      `${server.base}/api/v1`,
      `/changes?cursor=${encodeURIComponent(json.nextCursor)}`,
      { token: tokens.alice },
    );
    assert.ok(next.json.data.length > 0);
  });

  test('a cursor with changes after it is answered at once, without waiting', async () => {
    const cursor = await headCursor(server.base, tokens.alice);
    await importPgn(env, ALICE_PGN, 'alice', 'Already there');
    const waitsBefore = await metric(server.base, 'chessport_feed_waits_total');
    const waiting = waitForChanges(
      server.base,
      tokens.alice,
      `wait=${LONG_WAIT}&limit=2&cursor=${encodeURIComponent(cursor)}`,
    );
    const { status, json } = await waiting.answer;
    assert.equal(status, 200);
    assert.equal(json.data.length, 2, 'limit applies as without wait');
    assert.equal(json.hasMore, true);
    assert.equal(await metric(server.base, 'chessport_feed_waits_total'), waitsBefore, 'it never waited');
  });

  test('wait with since: from a time after every change, the first change after it answers', async () => {
    await headCursor(server.base, tokens.alice);
    const since = new Date(Date.now() + 1).toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const waiting = waitForChanges(server.base, tokens.alice, `wait=${LONG_WAIT}&since=${since}`);
    await waitingAtLeast(server.base, 1);
    await importPgn(env, ALICE_PGN, 'alice', 'Since then');
    const { status, json, at } = await waiting.answer;
    assert.equal(status, 200);
    assert.ok(json.data.length > 0);
    assert.ok(json.data.every((item) => item.updatedAt >= since));
    assert.ok(at - waiting.sentAt < WELL_BEFORE_MS);
  });

  test('wait with expand=game: the change that wakes it comes with its game', async () => {
    const cursor = await headCursor(server.base, tokens.alice);
    const waiting = waitForChanges(
      server.base,
      tokens.alice,
      `wait=${LONG_WAIT}&expand=game&cursor=${encodeURIComponent(cursor)}`,
    );
    await waitingAtLeast(server.base, 1);
    await importPgn(env, ALICE_PGN, 'alice', 'Expanded');
    const { status, json } = await waiting.answer;
    assert.equal(status, 200);
    assert.ok(json.data.length > 0);
    for (const item of json.data as unknown as { id: string; game: { id: string; pgn: string } }[]) {
      assert.equal(item.game.id, item.id);
      assert.match(item.game.pgn, /\[Event /);
    }
  });

  test('a token revoked while its request waits gets no change read after the revocation: 401', async () => {
    const token = await issueToken(env, 'alice', 'desktop', 'games.read');
    const cursor = await headCursor(server.base, token);
    const waiting = waitForChanges(
      server.base,
      token,
      `wait=${LONG_WAIT}&expand=game&cursor=${encodeURIComponent(cursor)}`,
    );
    await waitingAtLeast(server.base, 1);
    const revoked = await cli(env, ['tokens', 'revoke', token]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await importPgn(env, ALICE_PGN, 'alice', 'After the revocation');
    const { status, json, at } = await waiting.answer;
    assert.equal(status, 401, `answered ${status} with ${json.data?.length ?? 0} changes`);
    assert.equal(json.data, undefined, 'no change, no game');
    assert.ok(
      at - waiting.sentAt < WELL_BEFORE_MS,
      'answered when the change came, not at the end of its wait',
    );
  });

  test('wait outside 1 to 60, or not plain digits, is 400 invalid_request naming the range', async () => {
    for (const value of ['0', '61', '1.5', '-1', 'abc', '', '1e1', '+5', '99999999999999999999']) {
      const answer = await http(`${server.base}/api/v1`, `/changes?wait=${encodeURIComponent(value)}`, {
        token: tokens.alice,
      });
      assert.equal(answer.status, 400, `wait=${value}`);
      assert.equal(answer.json.error, 'invalid_request');
      assert.equal(answer.json.error_description, 'wait must be an integer from 1 to 60', `wait=${value}`);
    }
    const twice = await http(`${server.base}/api/v1`, '/changes?wait=1&wait=2', { token: tokens.alice });
    assert.equal(twice.status, 400);
    const both = await http(`${server.base}/api/v1`, '/changes?wait=1&cursor=x&since=2026-01-01T00:00:00Z', {
      token: tokens.alice,
    });
    assert.equal(both.status, 400, 'cursor with since is refused with wait too');
    // Refused before it waits: a forged cursor is 400 at once.
    const forged = await http(`${server.base}/api/v1`, `/changes?wait=${LONG_WAIT}&cursor=forged`, {
      token: tokens.alice,
    });
    assert.equal(forged.status, 400);
    const none = await http(`${server.base}/api/v1`, `/changes?wait=${LONG_WAIT}`, { token: null });
    assert.equal(none.status, 401, 'no token, no wait');
  });

  test('a wait counts once against the rate limit, however long it waits', async () => {
    const cursor = await headCursor(server.base, tokens.alice);
    const first = await http(`${server.base}/api/v1`, `/changes?cursor=${encodeURIComponent(cursor)}`, {
      token: tokens.alice,
    });
    const before = Number(first.headers.get('x-ratelimit-remaining'));
    const waiting = waitForChanges(server.base, tokens.alice, `wait=2&cursor=${encodeURIComponent(cursor)}`);
    await waitingAtLeast(server.base, 1);
    // It waits its 2 s (another user's import meanwhile does not end it), yet it is one request.
    await importPgn(env, ALICE_PGN, 'bob', 'Noise');
    const { headers } = await waiting.answer;
    assert.equal(Number(headers['x-ratelimit-remaining']), before - 1);
  });

  test('a client that leaves while waiting frees its waiter at once', async () => {
    await waitingAtMost(server.base, 0);
    const cursor = await headCursor(server.base, tokens.alice);
    const left = await metric(server.base, 'chessport_feed_waits_total', 'outcome="disconnect"');
    const aborted = await metric(server.base, 'chessport_http_requests_aborted_total');
    const output = logFrom(server);
    const waiting = waitForChanges(
      server.base,
      tokens.alice,
      `wait=${LONG_WAIT}&cursor=${encodeURIComponent(cursor)}`,
    );
    waiting.answer.catch(() => undefined); // it never comes
    await waitingAtLeast(server.base, 1);
    waiting.request.destroy();
    await waitingAtMost(server.base, 0);
    assert.equal(await metric(server.base, 'chessport_feed_waits_total', 'outcome="disconnect"'), left + 1);
    // Leaving a long-poll is how it is used, not an answer cut short: logged as info, not counted as aborted.
    assert.equal(await metric(server.base, 'chessport_http_requests_aborted_total'), aborted);
    await waitFor(() => output.text().includes('request left while waiting'));
    assert.doesNotMatch(output.text(), /request aborted/);
  });

  test('a wait that sees nothing ends with an empty page and the cursor it was given', async () => {
    const cursor = await headCursor(server.base, tokens.alice);
    const timeouts = await metric(server.base, 'chessport_feed_waits_total', 'outcome="timeout"');
    const waiting = waitForChanges(server.base, tokens.alice, `wait=1&cursor=${encodeURIComponent(cursor)}`);
    const { status, json, at } = await waiting.answer;
    assert.equal(status, 200);
    assert.deepEqual(json.data, []);
    assert.ok(at - waiting.sentAt >= 900, 'it waited its second');
    const next = await http<FeedPage>(
      `${server.base}/api/v1`,
      `/changes?cursor=${encodeURIComponent(json.nextCursor)}`,
      { token: tokens.alice },
    );
    assert.equal(next.json.nextCursor, json.nextCursor, 'the same position');
    assert.equal(await metric(server.base, 'chessport_feed_waits_total', 'outcome="timeout"'), timeouts + 1);
  });
});

describe('GET /changes?wait= as a heavy request', () => {
  let env: Env;
  let server: InProcessServer;
  let tokens: Readers;

  before(async () => {
    env = tempEnv();
    ({ server, tokens } = await startWithReaders(env));
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('one app and user hold at most 4 long-polls at once: the fifth is 429 naming the limit', async () => {
    const cursor = encodeURIComponent(await headCursor(server.base, tokens.alice));
    const held = Array.from({ length: 4 }, () =>
      waitForChanges(server.base, tokens.alice, `wait=${LONG_WAIT}&cursor=${cursor}`),
    );
    await waitingAtLeast(server.base, 4);
    const fifth = await http<{ error: string; error_description: string }>(
      `${server.base}/api/v1`,
      `/changes?wait=${LONG_WAIT}&cursor=${cursor}`,
      { token: tokens.alice },
    );
    assert.equal(fifth.status, 429);
    assert.equal(fifth.json.error, 'rate_limited');
    assert.match(
      fifth.json.error_description,
      /at most 4 long-polls of the changes feed \(wait\) at once per app and user/,
    );
    assert.equal(fifth.headers.get('retry-after'), '5');
    // A HEAD waits as a GET does, and reads the same page: it is refused as well, rather than a fifth wait.
    const head = await http(`${server.base}/api/v1`, `/changes?wait=${LONG_WAIT}&cursor=${cursor}`, {
      method: 'HEAD',
      token: tokens.alice,
    });
    assert.equal(head.status, 429);
    // Another user of the same app waits as ever, and the same user may still read the feed without waiting.
    const bobCursor = encodeURIComponent(await headCursor(server.base, tokens.bob));
    const bob = waitForChanges(server.base, tokens.bob, `wait=1&cursor=${bobCursor}`);
    assert.equal((await bob.answer).status, 200);
    const plain = await http(`${server.base}/api/v1`, `/changes?cursor=${cursor}`, { token: tokens.alice });
    assert.equal(plain.status, 200);
    // A client that leaves gives its slot back at once: a new wait is held again.
    for (const waiting of held) {
      waiting.request.destroy();
      await waiting.answer.catch(() => undefined);
    }
    await waitingAtMost(server.base, 0);
    const again = waitForChanges(server.base, tokens.alice, `wait=1&cursor=${cursor}`);
    assert.equal((await again.answer).status, 200);
  });
});

describe('GET /changes?wait= and the server’s timeouts and shutdown', () => {
  let env: Env;
  let token = '';

  before(async () => {
    env = tempEnv();
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'desktop']);
    token = await issueToken(env, 'alice', 'desktop', 'games.read');
    await importPgn(env, ALICE_PGN, 'alice', 'Main');
  });
  after(() => env?.cleanup());

  test('an idle timeout and a request timeout shorter than the wait do not cut it', async () => {
    const server = await serveInProcess(env, { IDLE_TIMEOUT: '1s', REQUEST_TIMEOUT: '1s' });
    try {
      const cursor = await headCursor(server.base, token);
      const waiting = waitForChanges(server.base, token, `wait=3&cursor=${encodeURIComponent(cursor)}`);
      const { status, json, at } = await waiting.answer;
      assert.equal(status, 200);
      assert.deepEqual(json.data, []);
      assert.ok(
        at - waiting.sentAt >= 2900,
        `answered after ${at - waiting.sentAt} ms, at the end of its wait`,
      );
    } finally {
      await server.stop();
    }
  });

  test('SIGTERM answers every waiting request at once with its empty page, then serve exits 0', async (t) => {
    // SIGTERM delivered as `chessport serve` takes it (stop(..., graceful): the requests in flight finish), and
    // the exit status serve's process would exit with.
    const server = await serveInProcess(env);
    let exited: Promise<number> | undefined;
    // A failure before the signal must not leave the server running (and the suite waiting on it).
    t.after(() => exited ?? server.stop());
    const output = logFrom(server);
    const cursor = await headCursor(server.base, token);
    // As many as one app and user may hold (LONG_POLLS_PER_CLIENT, 4 by default).
    const waits = Array.from({ length: 4 }, (_, i) =>
      waitForChanges(
        server.base,
        token,
        i % 2 ? `wait=60&cursor=${encodeURIComponent(cursor)}` : 'wait=60&since=2999-01-01T00:00:00Z',
      ),
    );
    await waitingAtLeast(server.base, waits.length);
    const signalledAt = Date.now();
    exited = server.stop('SIGTERM', { graceful: true });
    const answers = await Promise.all(waits.map((w) => w.answer));
    for (const { status, json, at } of answers) {
      assert.equal(status, 200);
      assert.deepEqual(json.data, []);
      assert.equal(json.hasMore, false);
      assert.ok(at - signalledAt < WELL_BEFORE_MS, `answered ${at - signalledAt} ms after SIGTERM`);
    }
    // Each empty page's cursor is a position to go on from, as at the end of a wait.
    assert.equal(answers[1]?.json.nextCursor, cursor);
    assert.equal(await exited, 0);
    assert.doesNotMatch(output.text(), /shutdown timeout/);
    assert.match(output.text(), /"msg":"stopped"/);
  });
});

describe('GET /changes?wait= with 1,000 clients waiting at once', () => {
  const CLIENTS = 1000;
  let env: Env;
  let server: InProcessServer;
  let token = '';

  before(async () => {
    env = tempEnv();
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'desktop']);
    token = await issueToken(env, 'alice', 'desktop', 'games.read');
    // One app and user holding a thousand waits: the limit of long-polls per client raised to match.
    server = await serveInProcess(env, {
      RATE_LIMIT_MAX: String(CLIENTS * 10),
      LONG_POLLS_PER_CLIENT: String(CLIENTS),
    });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('every one is held without an error, and every one gets the change of one import', async () => {
    const cursor = await headCursor(server.base, token);
    // One connection each (no keep-alive): 1,000 sockets on the server.
    const waits = [];
    for (let i = 0; i < CLIENTS; i++) {
      waits.push(waitForChanges(server.base, token, `wait=60&cursor=${encodeURIComponent(cursor)}`));
    }
    await waitingAtLeast(server.base, CLIENTS);
    const errors = await metric(server.base, 'chessport_http_requests_total', 'status="5');
    await importPgn(env, ALICE_PGN, 'alice', 'For everyone');
    const answers = await Promise.all(waits.map((w) => w.answer));
    const statuses = new Set(answers.map((a) => a.status));
    assert.deepEqual([...statuses], [200]);
    const sizes = new Set(answers.map((a) => a.json.data.length));
    assert.equal(sizes.size, 1, 'every one got the same page');
    assert.ok(([...sizes][0] ?? 0) > 0);
    assert.equal(await metric(server.base, 'chessport_http_requests_total', 'status="5'), errors);
    await waitingAtMost(server.base, 0);
  });
});
