// The client when no complete answer comes, on real sockets: a closed port, a server that accepts and never
// answers, a gateway that cuts the body mid-way. Each ends in a ChessportNetworkError after the retries
// (the URL, the attempts, timedOut/truncated, the platform's error as cause) and never shows the token; the
// caller's own abort stays their signal's reason; a cut body is fetched again where that is safe.
import assert from 'node:assert/strict';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import {
  ChessportClient,
  ChessportError,
  ChessportNetworkError,
  type RetryEvent,
} from '../../packages/client/src/index.ts';
import { type CuttingGateway, cuttingGateway } from '../helpers/cutting-gateway.ts';
import { type TcpProxy, tcpProxy } from '../helpers/tcp-proxy.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
let token: string;
/** Fast retries: the tests are about what ends the call, not about the backoff's pace. */
const retry = { maxRetries: 2, backoffMs: 5, maxBackoffMs: 10 };

before(async () => {
  world = await makeWorld();
  token = world.tokens.alice;
});
after(async () => world?.stop());

/** What the call threw; it must throw. */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('the call succeeded');
}

async function networkError(promise: Promise<unknown>): Promise<ChessportNetworkError> {
  const error = await thrown(promise);
  assert.ok(error instanceof ChessportNetworkError, `a ChessportNetworkError, not ${inspect(error)}`);
  return error;
}

/** Everything an integrator could log of the error: message, fields, stack and the whole cause chain. */
function everythingShown(error: unknown): string {
  return `${inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true })} ${JSON.stringify(error)}`;
}

async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('a closed port', () => {
  test('is a ChessportNetworkError after the retries, with the URL, the attempts and fetch’s error', async () => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const events: RetryEvent[] = [];
    const client = new ChessportClient({ baseUrl: base, token, retry, onRetry: (e) => events.push(e) });
    const error = await networkError(client.me());
    assert.equal(error.name, 'ChessportNetworkError');
    assert.ok(!(error instanceof ChessportError), 'not an answer of the server');
    assert.equal(error.url, `${base}/api/v1/me`);
    assert.equal(error.attempts, 3, 'the first attempt and 2 retries');
    assert.equal(error.timedOut, false);
    assert.equal(error.truncated, false);
    assert.ok(error.cause instanceof Error, 'the platform’s error is kept as cause');
    assert.equal(
      error.message,
      `GET ${base}/api/v1/me failed after 3 attempts: connect ECONNREFUSED ${base.slice('http://'.length)}`,
    );
    assert.deepEqual(
      events.map((event) => [event.reason, event.attempt]),
      [
        ['network', 1],
        ['network', 2],
      ],
    );
    for (const event of events) assert.ok(event.cause instanceof ChessportNetworkError);
    assert.ok(!everythingShown(error).includes(token), 'the token is nowhere in the error');
  });

  test('an unknown host name is one too, naming the failed lookup', async () => {
    const client = new ChessportClient({
      baseUrl: 'http://chessport.invalid',
      token,
      retry: { maxRetries: 0 },
    });
    const error = await networkError(client.databases());
    assert.equal(error.attempts, 1);
    assert.match(
      error.message,
      /^GET http:\/\/chessport\.invalid\/api\/v1\/databases failed after 1 attempt: .*ENOTFOUND/,
    );
  });
});

describe('a server that accepts the connection and never answers', () => {
  let proxy: TcpProxy;
  let base: string;
  before(async () => {
    proxy = await tcpProxy('127.0.0.1', Number(new URL(world.server.base).port));
    await proxy.hang();
    base = `http://127.0.0.1:${proxy.port}`;
  });
  after(async () => proxy?.close());

  test('times each attempt out after timeoutMs: timedOut, the TimeoutError as cause', async () => {
    const client = new ChessportClient({
      baseUrl: base,
      token,
      retry: { ...retry, maxRetries: 1, timeoutMs: 200 },
    });
    const started = performance.now();
    const error = await networkError(client.games({ limit: 5 }));
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 390, `two attempts of 200 ms (took ${Math.round(elapsed)} ms)`);
    assert.equal(error.timedOut, true);
    assert.equal(error.attempts, 2);
    assert.equal(error.url, `${base}/api/v1/games?limit=5`);
    assert.ok(error.cause instanceof DOMException && error.cause.name === 'TimeoutError');
    assert.equal(
      error.message,
      `GET ${base}/api/v1/games?limit=5 failed after 2 attempts: no answer within 200 ms`,
    );
    assert.ok(!everythingShown(error).includes(token));
  });

  test("the caller's abort is thrown as their signal's reason, while waiting and while backing off", async () => {
    const client = new ChessportClient({
      baseUrl: base,
      token,
      retry: { maxRetries: 3, backoffMs: 2000, maxBackoffMs: 2000, timeoutMs: 100 },
    });
    const mine = new Error('the user closed the page');
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(mine), 50);
    assert.equal(await thrown(client.me({ signal: waiting.signal })), mine, 'during the wait for headers');
    const backingOff = new AbortController();
    setTimeout(() => backingOff.abort(mine), 300);
    const started = performance.now();
    assert.equal(await thrown(client.me({ signal: backingOff.signal })), mine, 'during the backoff');
    assert.ok(performance.now() - started < 1500, 'the backoff ended at once');
    const plain = new AbortController();
    setTimeout(() => plain.abort(), 50);
    const reason = await thrown(client.me({ signal: plain.signal }));
    assert.ok(reason instanceof DOMException && reason.name === 'AbortError', 'abort() without a reason');
  });
});

describe('a gateway that cuts the body mid-way', () => {
  let gateway: CuttingGateway;
  let base: string;
  /** How many of the next answers are cut after half their body. */
  let cuts = 0;
  let requests = 0;
  let direct: ChessportClient;

  before(async () => {
    gateway = await cuttingGateway(world.server.base, () => {
      requests++;
      const cut = cuts > 0;
      if (cut) cuts--;
      return cut;
    });
    base = gateway.base;
    direct = new ChessportClient({ baseUrl: world.server.base, token });
  });
  after(async () => {
    await gateway?.close();
  });

  /** A client through the gateway, its retries told to `events`. */
  function through(events: RetryEvent[] = [], maxRetries = retry.maxRetries) {
    return new ChessportClient({
      baseUrl: base,
      token,
      retry: { ...retry, maxRetries },
      onRetry: (e) => events.push(e),
    });
  }

  test('a JSON answer cut once is fetched again: the caller gets the whole answer', async () => {
    const events: RetryEvent[] = [];
    const client = through(events);
    cuts = 1;
    assert.deepEqual(await client.me(), await direct.me());
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event?.reason, 'network');
    assert.ok(event?.cause instanceof ChessportNetworkError && event.cause.truncated);
    cuts = 1;
    assert.deepEqual(
      await collect(client.allGames({ limit: 2 })),
      await collect(direct.allGames({ limit: 2 })),
    );
    cuts = 1;
    assert.deepEqual(await collect(client.feed({ limit: 4 })), await collect(direct.feed({ limit: 4 })));
    assert.equal(events.length, 3, 'one retry per cut');
  });

  test('a PGN export cut once is fetched again, whole', async () => {
    const { slug } = world.alice.classics;
    const events: RetryEvent[] = [];
    const client = through(events);
    cuts = 1;
    const text = await client.databasePgn(slug);
    assert.equal(text, await direct.databasePgn(slug));
    assert.match(text, /^\[Event /);
    const [game] = (await direct.games({ limit: 1 })).data;
    assert.ok(game);
    cuts = 1;
    assert.equal(await client.gamePgn(game.id), await direct.gamePgn(game.id));
    assert.equal(events.length, 2);
  });

  test('cut every time, the call ends in a ChessportNetworkError marked truncated', async () => {
    const client = through([], 1);
    cuts = 2;
    requests = 0;
    const error = await networkError(client.databases());
    assert.equal(requests, 2);
    assert.equal(error.truncated, true);
    assert.equal(error.timedOut, false);
    assert.equal(error.attempts, 2);
    assert.equal(error.url, `${base}/api/v1/databases`);
    assert.match(
      error.message,
      /^GET \S+\/api\/v1\/databases failed after 2 attempts: the answer broke off \(.+\)$/,
    );
    assert.ok(!everythingShown(error).includes(token));
    cuts = 0;
  });

  test('a PGN stream cut mid-way errors with a truncated ChessportNetworkError, and is not fetched again', async () => {
    const client = through();
    cuts = 1;
    requests = 0;
    const stream = await client.databasePgnStream(world.alice.classics.slug);
    const error = await networkError(collect(stream));
    assert.equal(requests, 1, 'part of the text was handed out: not retried');
    assert.equal(error.truncated, true);
    assert.equal(error.attempts, 1);
    assert.match(error.url, /\/api\/v1\/databases\/[^/]+\/games\?format=pgn$/);
    assert.ok(!everythingShown(error).includes(token));
  });

  test("the caller's abort while a PGN stream is read is their signal's reason", async () => {
    const client = through();
    const controller = new AbortController();
    const mine = new Error('stop the download');
    const stream = await client.databasePgnStream(world.alice.classics.slug, { signal: controller.signal });
    controller.abort(mine);
    assert.equal(await thrown(collect(stream)), mine);
  });
});

describe('the token stays out of every error', () => {
  test('a base URL with a user name or password is refused at once, without quoting it', async () => {
    for (const baseUrl of [`http://user:${token}@127.0.0.1:1`, `http://${token}@127.0.0.1:1`]) {
      const error = await thrown((async () => new ChessportClient({ baseUrl, token }))());
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /must not carry a user name or password/);
      assert.ok(!everythingShown(error).includes(token));
    }
  });

  test('a token with a line break inside is refused at once, without quoting it; outer whitespace is dropped', async () => {
    const half = token.slice(0, 10);
    const broken = `${half}\n${token.slice(10)}`;
    const error = await thrown(
      (async () => new ChessportClient({ baseUrl: world.server.base, token: broken }))(),
    );
    assert.ok(error instanceof TypeError);
    assert.match(error.message, /printable ASCII/);
    assert.ok(!everythingShown(error).includes(half));
    // A token read from a file ends with a newline: fetch drops it from the header, and so does the client.
    const fromFile = new ChessportClient({ baseUrl: world.server.base, token: `${token}\n` });
    assert.ok((await fromFile.me()).id);
  });
});
