// The client's options as integrators pass them: retry values read from their own settings, which may be
// undefined or Infinity, and a base URL as they write it. An undefined value keeps the default, a bad one
// is a TypeError at once, and neither may turn into endless retries or attempts that time out at once.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import {
  ChessportClient,
  ChessportNetworkError,
  type RetryEvent,
  type RetryOptions,
} from '../../packages/client/src/index.ts';
import { VERSION } from '../../packages/client/src/version.ts';
import { ROOT } from '../helpers/harness.ts';

/** What the call threw; it must throw. */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('the call succeeded');
}

const ABORTED = new Error('waited long enough');

/** What client.me() threw when its signal was aborted after 300 ms: ABORTED if it was still waiting then. */
async function abortedAfter300ms(client: ChessportClient): Promise<unknown> {
  const controller = new AbortController();
  const call = thrown(client.me({ signal: controller.signal }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  controller.abort(ABORTED);
  return call;
}

/** A TCP server: `hang` accepts connections and never answers; `closed` refuses them. */
async function listening(): Promise<{ base: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function closedPort(): Promise<string> {
  const server = await listening();
  await server.close();
  return server.base;
}

/** Settings an app read from its configuration, where nothing was set. */
const unset: { maxRetries?: number; timeoutMs?: number } = {};

describe('retry values', () => {
  let hanging: { base: string; close(): Promise<void> };
  before(async () => {
    hanging = await listening();
  });
  after(async () => hanging?.close());

  test('an undefined maxRetries keeps the default 4 retries, where it retried for ever', async () => {
    const events: RetryEvent[] = [];
    const stop = new AbortController();
    const client = new ChessportClient({
      baseUrl: await closedPort(),
      token: 'cp_x',
      retry: { maxRetries: unset.maxRetries, backoffMs: 1, maxBackoffMs: 2 },
      onRetry: (event) => {
        events.push(event);
        if (event.attempt > 10) stop.abort(new Error('still retrying'));
      },
    });
    const error = await thrown(client.me({ signal: stop.signal }));
    assert.ok(error instanceof ChessportNetworkError, inspect(error));
    assert.equal(error.attempts, 5);
    assert.equal(events.length, 4);
  });

  for (const [what, timeoutMs] of [
    ['an undefined timeoutMs keeps the default 30 s', unset.timeoutMs],
    ['timeoutMs Infinity is no limit', Number.POSITIVE_INFINITY],
  ] as const) {
    test(`${what}, where each attempt timed out after 1 ms`, async () => {
      const events: RetryEvent[] = [];
      const client = new ChessportClient({
        baseUrl: hanging.base,
        token: 'cp_x',
        retry: { timeoutMs, maxRetries: 0 },
        onRetry: (event) => events.push(event),
      });
      assert.equal(await abortedAfter300ms(client), ABORTED, 'still waiting for the answer after 300 ms');
      assert.deepEqual(events, []);
    });
  }

  test('a backoff of Infinity waits, where the timer fired after 1 ms and the retries ran at once', async () => {
    const events: RetryEvent[] = [];
    const client = new ChessportClient({
      baseUrl: await closedPort(),
      token: 'cp_x',
      retry: { backoffMs: Number.POSITIVE_INFINITY, maxBackoffMs: Number.POSITIVE_INFINITY },
      onRetry: (event) => events.push(event),
    });
    assert.equal(await abortedAfter300ms(client), ABORTED, 'still in the first backoff after 300 ms');
    assert.equal(events.length, 1);
  });

  test('a value that is not a number from 0 up is a TypeError at once, naming it', () => {
    const bad: [RetryOptions, RegExp][] = [
      [{ maxRetries: Number.NaN }, /^retry\.maxRetries must be a number from 0$/],
      [{ maxRetries: -1 }, /^retry\.maxRetries must be a number from 0$/],
      [{ backoffMs: '500' as unknown as number }, /^retry\.backoffMs must be a number from 0$/],
      [{ timeoutMs: 0 }, /^retry\.timeoutMs must be a number above 0$/],
    ];
    for (const [retry, message] of bad)
      assert.throws(
        () => new ChessportClient({ baseUrl: 'https://chess.example.org', token: 'cp_x', retry }),
        (error) => error instanceof TypeError && message.test(error.message),
        inspect(retry),
      );
    // Infinity is a number from 0 up: the sync waits through any number of 429s.
    new ChessportClient({
      baseUrl: 'https://chess.example.org',
      token: 'cp_x',
      retry: { maxRateLimitRetries: Number.POSITIVE_INFINITY, maxRetries: 0 },
    });
  });
});

describe('onRetry', () => {
  /** A client whose every attempt is refused with 503 and Retry-After: 0, answered by `fetch` here. */
  const refusing = (options: { onRetry?: (event: RetryEvent) => void; retry?: RetryOptions }) =>
    new ChessportClient({
      baseUrl: 'https://chess.example.org',
      token: 'cp_x',
      fetch: async () =>
        new Response('{"error":"unavailable","error_description":"busy"}', {
          status: 503,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        }),
      ...options,
      retry: { maxRetries: 2, backoffMs: 1, maxBackoffMs: 1, ...options.retry },
    });

  test('inside retry, as the documentation shows it, it is told of each wait (it was silently ignored)', async () => {
    const events: RetryEvent[] = [];
    await thrown(refusing({ retry: { onRetry: (event) => events.push(event) } }).me());
    assert.deepEqual(
      events.map(({ reason, attempt, url }) => ({ reason, attempt, url })),
      [1, 2].map((attempt) => ({
        reason: 'unavailable',
        attempt,
        url: 'https://chess.example.org/api/v1/me',
      })),
    );
  });

  test('at the top level it is told of each wait as before, and the same function in both places once', async () => {
    for (const place of ['top', 'both'] as const) {
      const events: RetryEvent[] = [];
      const onRetry = (event: RetryEvent) => events.push(event);
      await thrown(refusing(place === 'top' ? { onRetry } : { onRetry, retry: { onRetry } }).me());
      assert.equal(events.length, 2, place);
    }
  });

  test('two different functions, or one that is no function, are a TypeError at once', () => {
    const options = [
      [{ onRetry: () => undefined, retry: { onRetry: () => undefined } }, /^onRetry is given twice/],
      [{ retry: { onRetry: 'log' as unknown as () => void } }, /^retry\.onRetry must be a function$/],
      [{ onRetry: 1 as unknown as () => void }, /^onRetry must be a function$/],
    ] as const;
    for (const [given, message] of options)
      assert.throws(
        () => new ChessportClient({ baseUrl: 'https://chess.example.org', token: 'cp_x', ...given }),
        (error) => error instanceof TypeError && message.test(error.message),
        inspect(given),
      );
  });
});

describe('arguments', () => {
  test('a base URL that is not http: or https:, or carries a query or fragment, is a TypeError at once', () => {
    for (const [baseUrl, message] of [
      ['ftp://chess.example.org', /must be an http: or https: URL/],
      ['file:///srv/chess', /must be an http: or https: URL/],
      ['https://chess.example.org/?key=secret', /must not carry a query or a fragment/],
      ['https://chess.example.org/x?', /must not carry a query or a fragment/],
      ['https://chess.example.org#top', /must not carry a query or a fragment/],
    ] as const)
      assert.throws(
        () => new ChessportClient({ baseUrl, token: 'cp_x' }),
        (error) =>
          error instanceof TypeError && message.test(error.message) && !error.message.includes('secret'),
        baseUrl,
      );
  });

  test('an invalid Date as since is a TypeError, before any request', async () => {
    let requests = 0;
    const client = new ChessportClient({
      baseUrl: 'https://chess.example.org',
      token: 'cp_x',
      fetch: async () => {
        requests++;
        return new Response('{}');
      },
    });
    const error = await thrown(client.changes({ since: new Date('yesterday') }));
    assert.ok(error instanceof TypeError, inspect(error));
    assert.match(error.message, /since is an invalid Date/);
    assert.equal(requests, 0);
  });
});

/** The value of one header field in each request a real HTTP server received, each answered as /me. */
async function headerSeen(
  name: string,
  options: { userAgent?: string | undefined; compression?: boolean | undefined },
): Promise<(string | string[] | undefined)[]> {
  const seen: (string | string[] | undefined)[] = [];
  const server = createHttpServer((req, res) => {
    seen.push(req.headers[name]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"data":{"id":"u","name":null,"email":null,"image":null}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const client = new ChessportClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'cp_x', ...options });
    await client.me();
    await client.databases();
    return seen;
  } finally {
    server.close();
  }
}

describe('compression', () => {
  test('by default fetch negotiates gzip; compression: false asks for answers as they are', async () => {
    assert.deepEqual(await headerSeen('accept-encoding', {}), ['gzip, deflate', 'gzip, deflate']);
    assert.deepEqual(await headerSeen('accept-encoding', { compression: undefined }), [
      'gzip, deflate',
      'gzip, deflate',
    ]);
    assert.deepEqual(await headerSeen('accept-encoding', { compression: false }), ['identity', 'identity']);
  });
});

describe('userAgent', () => {
  const agentsSeen = (options: { userAgent?: string | undefined }) => headerSeen('user-agent', options);

  test('by default every request says chessport-client and the package version', async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8'));
    assert.equal(VERSION, manifest.version, 'version.ts follows package.json');
    const expected = `chessport-client/${manifest.version}`;
    assert.deepEqual(await agentsSeen({}), [expected, expected]);
    assert.deepEqual(await agentsSeen({ userAgent: undefined }), [expected, expected]);
  });

  test('userAgent names the integration on every request', async () => {
    const agent = 'acme-sync/2.1 (+https://acme.example/bot) chessport-client/0.1.0';
    assert.deepEqual(await agentsSeen({ userAgent: agent }), [agent, agent]);
  });

  test('a userAgent that is no header value is a TypeError at once', () => {
    for (const userAgent of ['', ' acme', 'acme ', 'acme\r\nX-Injected: 1', 'acme\u00e9', 'tab\there'])
      assert.throws(
        () => new ChessportClient({ baseUrl: 'https://chess.example.org', token: 'cp_x', userAgent }),
        (error) => error instanceof TypeError && /userAgent must be printable ASCII/.test(error.message),
        JSON.stringify(userAgent),
      );
  });
});
