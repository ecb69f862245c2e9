// HTTP/1.1 on the wire (RFC 9112), with requests written as bytes over TCP: pipelined requests answered whole
// and in order, also when one of them fails or is not HTTP at all; Connection: close and HTTP/1.0 honoured;
// CONNECT and Expect, which Node answers or drops before any route; Host as RFC 9112 asks; rate limits
// counted per request when requests arrive together. The servers run in the test's process (serveInProcess):
// the same Node HTTP server, parser and options as `chessport serve`'s.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Env, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { type Seeded, seed } from '../helpers/production.ts';

let env: Env;
let seeded: Seeded;
let meOnly: string; // alice's token with user.read only
let server: InProcessServer;
let limited: InProcessServer; // the same store, RATE_LIMIT_MAX=3
before(async () => {
  env = tempEnv();
  seeded = await seed(env, 3);
  meOnly = await issueToken(env, 'alice', 'app-one', 'user.read');
  server = await serveInProcess(env);
  limited = await serveInProcess(env, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '60s' });
});
after(async () => {
  await server?.stop();
  await limited?.stop();
  env?.cleanup();
});

interface Answer {
  status: number;
  /** Lower-case names; a repeated field keeps its values in order. */
  headers: Map<string, string[]>;
  body: string;
}

const one = (answer: Answer | undefined, name: string) => answer?.headers.get(name)?.join(', ') ?? '';

/**
 * The whole answers at the start of `text` (latin1): framed by Content-Length or chunked, no body for HEAD
 * (the indexes of the requests in `heads`), 1xx, 204 and 304. Stops at the first incomplete one.
 */
function parse(text: string, heads: ReadonlySet<number>): { answers: Answer[]; rest: string } {
  const answers: Answer[] = [];
  let rest = text;
  let requests = 0; // answers to requests so far: an interim 1xx answers none
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (!rest.startsWith('HTTP/1.1 ') || end === -1) break;
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = new Map<string, string[]>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const status = Number(statusLine.slice(9, 12));
    let after = rest.slice(end + 4);
    let body = '';
    const interim = status < 200;
    if (interim || heads.has(requests) || status === 204 || status === 304) {
      // no body
    } else if (headers.get('transfer-encoding')?.join() === 'chunked') {
      let whole = false;
      for (;;) {
        const eol = after.indexOf('\r\n');
        if (eol === -1) break;
        const size = Number.parseInt(after.slice(0, eol), 16);
        if (after.length < eol + 2 + size + 2) break;
        body += after.slice(eol + 2, eol + 2 + size);
        after = after.slice(eol + 2 + size + 2);
        if (size === 0) {
          whole = true;
          break;
        }
      }
      if (!whole) break;
    } else {
      const length = Number(headers.get('content-length')?.[0] ?? Number.NaN);
      assert.ok(Number.isSafeInteger(length), `a length or chunks: ${statusLine}`);
      if (after.length < length) break;
      body = after.slice(0, length);
      after = after.slice(length);
    }
    answers.push({ status, headers, body });
    if (!interim) requests++;
    rest = after;
  }
  return { answers, rest };
}

interface Conversation {
  answers: Answer[];
  /** The server closed the connection (otherwise it was still open `linger` ms after the last answer). */
  closed: boolean;
  /** Bytes after the last whole answer. */
  rest: string;
}

/**
 * Writes `bytes` (latin1) in one write, then reads until the server closes the connection, or until `expect`
 * answers (interim ones included) are in and nothing more came for `linger` ms.
 */
function converse(
  target: InProcessServer,
  bytes: string,
  options: { expect?: number; heads?: number[]; linger?: number } = {},
): Promise<Conversation> {
  const heads = new Set(options.heads ?? []);
  const linger = options.linger ?? 300;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(target.base).port), '127.0.0.1');
    let text = '';
    let quiet: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(
      () => socket.destroy(new Error(`no end after 10 s: ${text.slice(0, 300)}`)),
      10_000,
    );
    const finish = (closed: boolean) => {
      clearTimeout(giveUp);
      clearTimeout(quiet);
      socket.removeAllListeners('close');
      socket.destroy();
      resolve({ ...parse(text, heads), closed });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      clearTimeout(quiet);
      if (options.expect !== undefined && parse(text, heads).answers.length >= options.expect) {
        quiet = setTimeout(() => finish(false), linger);
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET') reject(error);
    });
    socket.on('close', () => finish(true));
    socket.write(Buffer.from(bytes, 'latin1'));
  });
}

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const alice = () => bearer(seeded.tokens.alice);

function assertErrorShape(answer: Answer | undefined, status: number, code: string) {
  assert.equal(answer?.status, status);
  assert.match(one(answer, 'content-type'), /^application\/json/);
  assert.match(one(answer, 'x-request-id'), /^[0-9A-Za-z._-]+$/);
  const body = JSON.parse(answer?.body ?? '') as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, code);
}

describe('pipelining', () => {
  test('answers come whole and in request order, errors among them, and the connection stays open', async () => {
    const requests: [string, number][] = [
      [get('/api/v1/me', alice()), 200],
      [get('/api/v1/me'), 401],
      [get('/api/v1/nowhere', alice()), 404],
      [get('/api/v1/games?limit=0', alice()), 400],
      [get('/api/v1/games', bearer(meOnly)), 403],
      [`POST /api/v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{bad}`, 405],
      [get('/api/v1/games?limit=2', alice(), 'HEAD'), 200],
      [get(`/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`, alice()), 200],
      [get('/api/v1/games/01a2015f-3b0a-7a46-be6b-4656ecc02230', alice()), 404],
      [get('/api/v1/me', alice(), 'HEAD'), 200],
      [get('/api/v1/me', alice()), 200],
    ];
    // Each request names its answer: X-Request-Id is echoed.
    const bytes = requests
      .map(([request], i) => request.replace('\r\n', `\r\nX-Request-Id: request-${i}\r\n`))
      .join('');
    const sent = await converse(server, bytes, { expect: requests.length, heads: [6, 9] });
    assert.deepEqual(
      sent.answers.map((a) => [one(a, 'x-request-id'), a.status]),
      requests.map(([, status], i) => [`request-${i}`, status]),
    );
    assert.equal(sent.rest, '');
    assert.equal(sent.closed, false);
    for (const answer of sent.answers) assert.notEqual(one(answer, 'connection'), 'close');
    assert.match(sent.answers[7]?.body ?? '', /^\[Event "Seed event"\]/);
    assert.equal(sent.answers[10]?.body, sent.answers[0]?.body);
  });

  const closing: [string, () => string][] = [
    [
      'an HTTP/1.1 request with Connection: close',
      () => get('/api/v1/me', { ...alice(), Connection: 'close' }),
    ],
    [
      'an HTTP/1.0 request',
      () => `GET /api/v1/me HTTP/1.0\r\nAuthorization: Bearer ${seeded.tokens.alice}\r\n\r\n`,
    ],
  ];
  for (const [what, first] of closing) {
    test(`${what} gets its answer, then the connection closes; requests after it are not processed`, async () => {
      // Before: Node's parser refused the bytes after it, and its 400 went out in place of the answer.
      const sent = await converse(
        server,
        first() + get('/api/v1/me', alice()) + get('/api/v1/games', alice()),
      );
      assert.equal(sent.closed, true);
      assert.deepEqual(
        sent.answers.map((a) => a.status),
        [200],
      );
      assert.equal(one(sent.answers[0], 'connection'), 'close');
      assert.match(sent.answers[0]?.body ?? '', /^\{"data":\{"id":/);
      assert.equal(sent.rest, '');
    });
  }

  const broken: [string, string, number][] = [
    ['a method Node does not know', 'BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a bare LF', 'GET /api/v1/me HTTP/1.1\nHost: x\n\n', 400],
    [
      'Content-Length and Transfer-Encoding',
      `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
    ],
    ['headers too large', `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    // Node hands these to the routes before their body fails: the request itself is answered 400, not 401.
    [
      'a Transfer-Encoding that does not end in chunked',
      get('/api/v1/me', { 'Transfer-Encoding': 'gzip' }),
      400,
    ],
    ['a broken chunk', `${get('/api/v1/me', { 'Transfer-Encoding': 'chunked' })}zz\r\n`, 400],
  ];
  for (const [what, bytes, status] of broken) {
    test(`a request with ${what} after good ones: their answers first, in order, then ${status} and the close`, async () => {
      // The first answer waits for the store (the token); the second is immediate. Before, the error went
      // out first, in place of the first answer.
      const good = get('/api/v1/me', alice()) + get('/api/v1/nowhere');
      const sent = await converse(server, good + bytes);
      assert.deepEqual(
        sent.answers.map((a) => a.status),
        [200, 404, status],
      );
      assert.match(sent.answers[0]?.body ?? '', /^\{"data":\{"id":/);
      assertErrorShape(sent.answers[2], status, 'invalid_request');
      assert.equal(one(sent.answers[2], 'connection'), 'close');
      assert.equal(sent.closed, true);
      assert.equal(sent.rest, '');
    });
  }

  test('a request whose body Node cannot parse is answered 400 itself, not by its route with a 400 after', async () => {
    // RFC 9112 6.3: a Transfer-Encoding that does not end in chunked is 400 and the close. Node hands the
    // request to the routes before it finds out (so too before a chunk size that is not hex): the route's
    // answer, a 200 or the streamed export here, is replaced by the 400, not followed by it. (A body that
    // fails after the route has answered gets its 400 after the answer.)
    const requests = [
      get('/api/v1/me', { ...alice(), 'Transfer-Encoding': 'xchunked' }),
      get(`/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`, {
        ...alice(),
        'Transfer-Encoding': 'chunked, gzip',
      }),
      `${get('/api/v1/nowhere', { 'Transfer-Encoding': 'chunked' })}zz\r\n`,
    ];
    for (const request of requests) {
      const sent = await converse(server, request);
      assert.equal(sent.answers.length, 1, request.slice(0, request.indexOf('\r')));
      assertErrorShape(sent.answers[0], 400, 'invalid_request');
      assert.equal(one(sent.answers[0], 'connection'), 'close');
      assert.equal(one(sent.answers[0], 'etag'), '');
      assert.equal(sent.closed, true);
    }
  });

  test('requests of one app and user that arrive together are each counted once: the first ones pass', async () => {
    // Before: each request read the bucket's shared count after all of them had added to it, so all five
    // saw 5 of 3 and were refused, and none saw its own remaining count.
    const five = get('/api/v1/me', bearer(seeded.tokens.aliceAgain)).repeat(5);
    const sent = await converse(limited, five, { expect: 5 });
    // Counted in the order their tokens are found, which on PostgreSQL need not be the order they came.
    const counted = sent.answers.map((a) => `${a.status} ${one(a, 'x-ratelimit-remaining')}`).sort();
    assert.deepEqual(counted, ['200 0', '200 1', '200 2', '429 0', '429 0']);
  });
});

describe('before any route', () => {
  test('answers Node refuses to parse carry Date, as every 4xx from a server with a clock must', async () => {
    for (const bytes of [
      'BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n',
      `GET /${'a'.repeat(20_000)} HTTP/1.1\r\n\r\n`,
    ]) {
      const sent = Date.now();
      const [answer] = (await converse(server, bytes)).answers;
      const received = Date.now();
      assert.ok(answer && answer.status >= 400, bytes.slice(0, 20));
      const date = one(answer, 'date');
      assert.match(date, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      // The time of the answer, between the request and its arrival: in whole seconds, and Node renews the
      // text it caches at each second's end, which may come just after an answer that was under way.
      const second = Math.floor(sent / 1000) * 1000;
      assert.ok(Date.parse(date) >= second - 1000 && Date.parse(date) <= received, date);
    }
  });

  test('CONNECT is 405 method_not_allowed in the error shape, then the close; answers before it still go out', async () => {
    // Before: Node dropped the connection without a word, and with it the answers still due.
    for (const target of ['localhost:443', '/api/v1/me']) {
      const connectRequest = `CONNECT ${target} HTTP/1.1\r\nHost: localhost:443\r\nX-Request-Id: tunnel\r\n\r\n`;
      const alone = await converse(server, connectRequest);
      assert.equal(alone.answers.length, 1, target);
      assertErrorShape(alone.answers[0], 405, 'method_not_allowed');
      assert.equal(one(alone.answers[0], 'allow'), 'GET, HEAD, OPTIONS');
      assert.equal(one(alone.answers[0], 'x-request-id'), 'tunnel');
      assert.equal(one(alone.answers[0], 'connection'), 'close');
      assert.equal(alone.closed, true);
      const after = await converse(server, get('/api/v1/me', alice()) + get('/nowhere') + connectRequest);
      assert.deepEqual(
        after.answers.map((a) => a.status),
        [200, 404, 405],
      );
      assert.equal(after.closed, true);
    }
  });

  test('an expectation other than 100-continue is 417 in the error shape; the connection goes on', async () => {
    // Before: Node's own 417, with an empty body and no X-Request-Id.
    const sent = await converse(
      server,
      get('/api/v1/me', { ...alice(), Expect: 'teapot', 'X-Request-Id': 'expecting' }) +
        get('/api/v1/me', alice()),
      { expect: 2 },
    );
    assert.deepEqual(
      sent.answers.map((a) => a.status),
      [417, 200],
    );
    assertErrorShape(sent.answers[0], 417, 'invalid_request');
    assert.equal(one(sent.answers[0], 'x-request-id'), 'expecting');
    assert.equal(sent.closed, false);
    // 100-continue is Node's: an interim 100, then the answer.
    const continued = await converse(
      server,
      get('/api/v1/me', { ...alice(), Expect: '100-continue', 'Content-Length': '0' }),
      { expect: 2 },
    );
    assert.deepEqual(
      continued.answers.map((a) => a.status),
      [100, 200],
    );
  });
});

describe('Host', () => {
  const request = (hosts: string[]) =>
    `GET /api/v1/me HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}Authorization: Bearer ${seeded.tokens.alice}\r\n\r\n`;

  test('more than one Host line, or a Host that is not a host, is 400 invalid_request and the close (RFC 9112 3.2)', async () => {
    // Before: 200, from whichever Host Node kept.
    const bad = [
      ['localhost', 'localhost'],
      ['localhost', 'example.org'],
      ['a b'],
      ['localhost, example.org'],
      ['user@localhost'],
      ['localhost/x'],
      ['localhost:8o'],
      ['[::1'],
      ['"localhost"'],
    ];
    for (const hosts of bad) {
      const sent = await converse(server, request(hosts) + get('/api/v1/me', alice()));
      assert.equal(sent.answers.length, 1, hosts.join(' | '));
      assertErrorShape(sent.answers[0], 400, 'invalid_request');
      assert.equal(one(sent.answers[0], 'connection'), 'close', hosts.join(' | '));
      assert.equal(sent.closed, true, hosts.join(' | '));
    }
    // HTTP/1.0 needs no Host, but two are still two.
    const old = await converse(server, 'GET /api/v1/me HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n');
    assertErrorShape(old.answers[0], 400, 'invalid_request');
  });

  test('any host RFC 3986 allows is fine: names, IPv4, IPv6 literals, ports, an empty one', async () => {
    for (const host of [
      'localhost',
      'LOCALHOST:8080',
      '127.0.0.1:1',
      '[::1]:80',
      '[v1.fe]',
      'xn--bcher-kva.example',
      'a%41.example',
      'localhost:',
      '',
    ]) {
      const sent = await converse(server, request([host]), { expect: 1, linger: 50 });
      assert.equal(sent.answers[0]?.status, 200, `Host: ${host}`);
    }
  });
});
