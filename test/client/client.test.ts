// The typed client against a real server: every method gives what the raw HTTP answer holds, the iterators
// follow Link rel="next" and the feed's nextCursor, errors are typed, 429 is waited out as Retry-After says.
// The servers run in the test's process (makeWorld's, and serveInProcess for the rate-limited one).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type ChangesPage,
  ChessportClient,
  ChessportError,
  ChessportNetworkError,
  type RetryEvent,
} from '../../packages/client/src/index.ts';
import { http } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
let client: ChessportClient;

before(async () => {
  world = await makeWorld();
  client = new ChessportClient({ baseUrl: world.server.base, token: world.tokens.alice });
});
after(async () => world?.stop());

/** The raw answer's JSON `data`, read without the client. */
async function raw<T>(path: string, token = world.tokens.alice): Promise<T> {
  const res = await http<{ data: T }>(world.base, path, { token });
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return res.json.data;
}

async function rawText(path: string): Promise<string> {
  const res = await http(world.base, path, { token: world.tokens.alice });
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return res.text;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

const ids = (items: { id: string }[]) => items.map((item) => item.id);

describe('one method per endpoint', () => {
  test('me() and databases() give the data of /me and /databases', async () => {
    assert.deepEqual(await client.me(), await raw('/me'));
    const databases = await client.databases();
    assert.deepEqual(databases, await raw('/databases'));
    assert.deepEqual(
      databases.map((db) => db.slug).sort(),
      [world.alice.classics.slug, world.alice.main.slug].sort(),
    );
  });

  test('the base address may carry /api/v1 and a trailing slash', async () => {
    const prefixed = new ChessportClient({ baseUrl: `${world.base}/`, token: world.tokens.alice });
    assert.equal(prefixed.apiBase, world.base);
    assert.deepEqual(await prefixed.me(), await client.me());
  });

  test('games() gives one page and the absolute target of Link rel="next"', async () => {
    const page = await client.games({ limit: 2, offset: 2 });
    assert.deepEqual(page.data, await raw('/games?limit=2&offset=2'));
    assert.equal(page.next, `${world.base}/games?limit=2&offset=4`);
    const last = await client.games({ limit: 200 });
    assert.equal(last.next, null, 'no next page after the last one');
  });

  test('databaseGames() takes the UUID or the slug', async () => {
    const { id, slug } = world.alice.main;
    const bySlug = await client.databaseGames(slug, { limit: 200 });
    const byId = await client.databaseGames(id, { limit: 200 });
    assert.deepEqual(bySlug.data, await raw(`/databases/${id}/games?limit=200`));
    assert.deepEqual(byId.data, bySlug.data);
    assert.ok(bySlug.data.length > 0);
  });

  test('game() gives the detail; gamePgn() its PGN, as the API serves it', async () => {
    const [first] = (await client.games()).data;
    assert.ok(first);
    const detail = await client.game(first.id);
    assert.deepEqual(detail, await raw(`/games/${first.id}`));
    const pgn = await client.gamePgn(first.id);
    assert.equal(pgn, await rawText(`/games/${first.id}?format=pgn`));
    assert.equal(pgn, detail.pgn);
  });

  test('databasePgn() and databasePgnStream() give the same text as the export', async () => {
    const { slug } = world.alice.classics;
    const text = await client.databasePgn(slug);
    assert.equal(text, await rawText(`/databases/${slug}/games?format=pgn`));
    assert.match(text, /^\[Event /);
    const stream = await client.databasePgnStream(slug);
    const chunks = await collect(stream);
    assert.ok(chunks.every((chunk) => typeof chunk === 'string'));
    assert.equal(chunks.join(''), text);
  });

  test('changes() gives one feed page', async () => {
    const page = await client.changes({ limit: 3 });
    const rawPage = (await http<ChangesPage>(world.base, '/changes?limit=3', { token: world.tokens.alice }))
      .json;
    assert.deepEqual(page.data, rawPage.data);
    assert.equal(page.hasMore, true);
    assert.equal(typeof page.nextCursor, 'string');
    const since = await client.changes({ since: new Date(0), limit: 3 });
    assert.deepEqual(ids(since.data), ids(page.data), 'since the epoch is the whole feed');
  });
});

describe('iterators', () => {
  test('allGames() follows Link rel="next" and yields every game exactly once, in list order', async () => {
    const everything = await raw<{ id: string }[]>('/games?limit=200');
    assert.ok(everything.length >= 5, 'enough games for several pages');
    const pages = await collect(client.gamePages({ limit: 2 }));
    assert.equal(pages.length, Math.ceil(everything.length / 2));
    const games = await collect(client.allGames({ limit: 2 }));
    assert.deepEqual(ids(games), ids(everything));
    assert.equal(new Set(ids(games)).size, games.length);
  });

  test('allDatabaseGames() pages through one database', async () => {
    const { slug, id } = world.alice.main;
    const games = await collect(client.allDatabaseGames(slug, { limit: 1 }));
    assert.deepEqual(ids(games), ids(await raw<{ id: string }[]>(`/databases/${id}/games?limit=200`)));
    assert.ok(games.every((game) => game.databaseId === id));
  });

  test('feed() follows nextCursor until hasMore is false; the last cursor continues with nothing new', async () => {
    const pages = await collect(client.feed({ limit: 3 }));
    const listed = await raw<{ id: string }[]>('/games?limit=200');
    assert.equal(pages.at(-1)?.hasMore, false);
    assert.ok(pages.slice(0, -1).every((page) => page.hasMore));
    const changed = pages.flatMap((page) => ids(page.data));
    assert.deepEqual([...changed].sort(), ids(listed).sort(), 'every game once');
    const cursor = pages.at(-1)?.nextCursor;
    assert.ok(cursor);
    const rest = await collect(client.feed({ cursor }));
    assert.equal(rest.length, 1);
    assert.deepEqual(rest[0]?.data, []);
    assert.equal(rest[0]?.nextCursor, cursor, 'an empty page hands back the position sent');
  });
});

describe('typed errors', () => {
  async function failure(promise: Promise<unknown>): Promise<ChessportError> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof ChessportError, `a ChessportError, not ${String(error)}`);
      return error;
    }
    assert.fail('the call succeeded');
  }

  test('401 invalid_token for a revoked token', async () => {
    const revoked = new ChessportClient({ baseUrl: world.server.base, token: world.tokens.aliceRevoked });
    const error = await failure(revoked.me());
    assert.equal(error.status, 401);
    assert.equal(error.error, 'invalid_token');
    assert.match(error.error_description, /\S/);
    assert.match(error.message, /^401 invalid_token: /);
  });

  test('403 insufficient_scope for a token without games.read', async () => {
    const meOnly = new ChessportClient({ baseUrl: world.server.base, token: world.tokens.aliceMeOnly });
    const error = await failure(meOnly.games());
    assert.equal(error.status, 403);
    assert.equal(error.error, 'insufficient_scope');
  });

  test("404 not_found for an unknown game, and for another user's game", async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', world.bob.gameIds[0] as string]) {
      const error = await failure(client.game(id));
      assert.equal(error.status, 404);
      assert.equal(error.error, 'not_found');
    }
    assert.equal((await failure(client.databasePgn('no-such-database'))).error, 'not_found');
  });

  test('400 invalid_request for a tampered cursor; a request id comes along', async () => {
    const error = await failure(client.changes({ cursor: 'v1.tampered' }));
    assert.equal(error.status, 400);
    assert.equal(error.error, 'invalid_request');
    assert.match(error.error_description, /cursor/);
    assert.ok(error.requestId);
  });
});

describe('429: waiting as Retry-After says', () => {
  let limited: InProcessServer;
  before(async () => {
    limited = await serveInProcess(world.env, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '1s' });
  });
  after(async () => limited?.stop());

  test('calls beyond the limit wait and then succeed', async () => {
    const events: RetryEvent[] = [];
    const patient = new ChessportClient({
      baseUrl: limited.base,
      token: world.tokens.alice2,
      onRetry: (event) => events.push(event),
    });
    const started = performance.now();
    for (let i = 0; i < 8; i++) assert.ok((await patient.me()).id);
    const elapsed = performance.now() - started;
    const waits = events.filter((event) => event.reason === 'rate_limited');
    assert.ok(waits.length >= 1, 'the limit was hit');
    for (const wait of waits) {
      assert.ok(wait.waitMs >= 1000, 'Retry-After is whole seconds, at least 1');
      assert.ok(wait.cause instanceof ChessportError && wait.cause.error === 'rate_limited');
    }
    assert.ok(elapsed >= 900, `8 calls at 3 per second take over a second (took ${Math.round(elapsed)} ms)`);
  });

  test('a Retry-After above the cap fails at once with the 429', async () => {
    const impatient = new ChessportClient({
      baseUrl: limited.base,
      token: world.tokens.alice2,
      retry: { maxRateLimitWaitMs: 10 },
    });
    let error: unknown;
    for (let i = 0; i < 10 && !error; i++) await impatient.me().catch((e: unknown) => (error = e));
    assert.ok(error instanceof ChessportError);
    assert.equal(error.status, 429);
    assert.equal(error.error, 'rate_limited');
    assert.ok((error.retryAfter ?? 0) >= 1);
  });

  test('an abort signal ends the wait', async () => {
    const patient = new ChessportClient({ baseUrl: limited.base, token: world.tokens.alice2 });
    const controller = new AbortController();
    const calls = Array.from({ length: 8 }, () => patient.me({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('stop waiting')), 100);
    const started = performance.now();
    const outcomes = await Promise.allSettled(calls);
    assert.ok(performance.now() - started < 900, 'aborted well before the window ends');
    const aborted = outcomes.filter((o) => o.status === 'rejected');
    assert.ok(aborted.length >= 1);
    for (const outcome of aborted) assert.equal((outcome.reason as Error).message, 'stop waiting');
  });
});

describe('503 and network failures are retried with backoff', () => {
  /** Real fetch, except that the first `n` calls fail the given way. */
  function failingFirst(n: number, fail: () => Promise<Response>): typeof fetch {
    let calls = 0;
    return (input, init) => (++calls <= n ? fail() : fetch(input, init));
  }
  const unavailable = async () =>
    new Response(JSON.stringify({ error: 'unavailable', error_description: 'store busy' }), {
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
    });
  const retry = { backoffMs: 10, maxBackoffMs: 20 };

  test('503 twice, then the answer', async () => {
    const events: RetryEvent[] = [];
    const c = new ChessportClient({
      baseUrl: world.server.base,
      token: world.tokens.alice,
      retry,
      fetch: failingFirst(2, unavailable),
      onRetry: (event) => events.push(event),
    });
    assert.deepEqual(await c.me(), await client.me());
    assert.deepEqual(
      events.map((e) => [e.reason, e.attempt]),
      [
        ['unavailable', 1],
        ['unavailable', 2],
      ],
    );
  });

  test('a network failure, then the answer; out of retries, a ChessportNetworkError with it as cause', async () => {
    const failure = new TypeError('fetch failed');
    const networkDown = () => Promise.reject(failure);
    const recovering = new ChessportClient({
      baseUrl: world.server.base,
      token: world.tokens.alice,
      retry,
      fetch: failingFirst(1, networkDown),
    });
    assert.ok((await recovering.databases()).length > 0);
    const down = new ChessportClient({
      baseUrl: world.server.base,
      token: world.tokens.alice,
      retry: { ...retry, maxRetries: 2 },
      fetch: failingFirst(3, networkDown),
    });
    await assert.rejects(
      down.me(),
      (error: unknown) =>
        error instanceof ChessportNetworkError && error.attempts === 3 && error.cause === failure,
    );
    const stillBusy = new ChessportClient({
      baseUrl: world.server.base,
      token: world.tokens.alice,
      retry: { ...retry, maxRetries: 1 },
      fetch: failingFirst(2, unavailable),
    });
    await assert.rejects(stillBusy.me(), (error) => error instanceof ChessportError && error.status === 503);
  });

  test('the token is never sent to another origin named by a Link header: a ChessportError instead', async () => {
    const asked: string[] = [];
    const elsewhere: typeof fetch = async (input, init) => {
      asked.push(String(input));
      const answer = await fetch(input, init);
      const headers = new Headers(answer.headers);
      headers.set('link', '<http://elsewhere.example/api/v1/games?offset=2>; rel="next"');
      return new Response(await answer.text(), { status: answer.status, headers });
    };
    const c = new ChessportClient({
      baseUrl: world.server.base,
      token: world.tokens.alice,
      fetch: elsewhere,
    });
    await assert.rejects(
      collect(c.allGames({ limit: 2 })),
      (error: unknown) =>
        error instanceof ChessportError &&
        error.error === 'unexpected_response' &&
        /refusing to send the token outside/.test(error.message),
    );
    assert.deepEqual(asked, [`${world.base}/games?limit=2`]);
  });

  test('behind a path prefix, pages follow the Link header under it; a link outside the API is refused', async () => {
    const asked: string[] = [];
    // A proxy that serves the API under /pfx: the server's Link targets are root-relative (/api/v1/...).
    const prefixed: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      asked.push(url.pathname + url.search);
      if (!url.pathname.startsWith('/pfx/')) return new Response('not here', { status: 404 });
      url.pathname = url.pathname.slice('/pfx'.length);
      return fetch(url, init);
    };
    const c = new ChessportClient({
      baseUrl: `${world.server.base}/pfx`,
      token: world.tokens.alice,
      fetch: prefixed,
    });
    const all = await collect(c.allGames({ limit: 2 }));
    assert.ok(all.length > 2);
    assert.ok(
      asked.length > 1 && asked.every((path) => path.startsWith('/pfx/api/v1/games?')),
      asked.join(' '),
    );
    const outside: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      const headers = new Headers(answer.headers);
      headers.set('link', '</admin/export?offset=2>; rel="next"');
      return new Response(await answer.text(), { status: answer.status, headers });
    };
    const d = new ChessportClient({ baseUrl: world.server.base, token: world.tokens.alice, fetch: outside });
    await assert.rejects(
      collect(d.allGames({ limit: 2 })),
      (error: unknown) =>
        error instanceof ChessportError && /refusing to send the token outside/.test(error.message),
    );
  });

  test("a success that is not the API's JSON is a ChessportError unexpected_response", async () => {
    const answering =
      (body: string, type: string): typeof fetch =>
      async () =>
        new Response(body, { status: 200, headers: { 'content-type': type } });
    for (const [body, type] of [
      ['<html>portal</html>', 'text/html'],
      ['{"hello":1}', 'application/json'],
      ['[1,2]', 'application/json'],
      ['{broken', 'application/json'],
    ] as const) {
      const c = new ChessportClient({
        baseUrl: world.server.base,
        token: world.tokens.alice,
        fetch: answering(body, type),
      });
      await assert.rejects(
        c.me(),
        (error: unknown) => error instanceof ChessportError && error.error === 'unexpected_response',
        body,
      );
      await assert.rejects(
        c.games(),
        (error: unknown) => error instanceof ChessportError && error.error === 'unexpected_response',
        body,
      );
    }
  });

  test('a feed page that says hasMore but does not move on ends the iteration with an error', async () => {
    const stuck: typeof fetch = async () =>
      new Response('{"data":[],"nextCursor":"same","hasMore":true}', {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    const c = new ChessportClient({ baseUrl: world.server.base, token: world.tokens.alice, fetch: stuck });
    await assert.rejects(collect(c.feed({ cursor: 'same' })), /does not move on|same cursor/);
  });
});
