// What the server does before a route's handler, with hand-made requests over TCP: clients too slow to send
// their request, OPTIONS with a body, a missing Host header, CORS only on API paths, the docs redirect.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { bearer, header, raw, type Seeded, seed } from '../helpers/production.ts';

let env: Env;
let seeded: Seeded;
let server: InProcessServer; // REQUEST_TIMEOUT=1s
before(async () => {
  env = tempEnv();
  seeded = await seed(env, 2);
  server = await serveInProcess(env, { REQUEST_TIMEOUT: '1s' });
});
after(async () => {
  await server?.stop();
});

interface Exchange {
  /** Everything the server sent until it closed the connection. */
  text: string;
  /** Milliseconds from the first byte sent to the close. */
  closedAfter: number;
  /** Whether the server closed the connection before the client had dripped all it had to send. */
  cutShort: boolean;
  /**
   * The close was a reset, with nothing received: a byte dripped just before the server closed reached it
   * unread, so its kernel answered with RST, which may discard the answer already on its way (seen on a
   * loaded machine). Only the time of the close can be checked then.
   */
  lost: boolean;
}

/**
 * Writes `head`, then `drip` one byte every `every` ms until the server closes the connection; gives up (and
 * fails) after `limit` ms (a connection that stays open for good).
 */
function exchange(head: string, drip = '', every = 200, limit = 60_000): Promise<Exchange> {
  const port = Number(new URL(server.base).port);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < drip.length && socket.writable) socket.write(drip[sent++] as string);
    }, every);
    const giveUp = setTimeout(() => socket.destroy(new Error(`still open after ${limit} ms`)), limit);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    let reset = false;
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      if (error.code === 'ECONNRESET') reset = true;
      else reject(error);
    });
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({
        text,
        closedAfter: Date.now() - started,
        cutShort: sent < drip.length,
        lost: reset && text === '',
      });
    });
    socket.write(head);
  });
}

/** The answers in `text`: status, lower-case headers and body (Content-Length framed). */
function answers(text: string): { status: number; headers: Map<string, string>; body: string }[] {
  const out = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const lines = rest.slice(0, end).split('\r\n');
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = Number(headers.get('content-length') ?? 0);
    out.push({
      status: Number(lines[0]?.slice(9, 12)),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  assert.equal(rest, '', 'nothing but whole answers');
  return out;
}

function assertErrorBody(body: string, code: string) {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed).sort(), ['error', 'error_description']);
  assert.equal(parsed.error, code);
}

describe('slow clients', () => {
  test('a head that is not in within REQUEST_TIMEOUT gets 408 in the error shape, and the connection closes', async () => {
    // The head would take 20 s to come in whole: the server does not wait for it.
    const sent = await exchange('GET /api/v1/games HTTP/1.1\r\nHost: x\r\n', `X-Slow: ${'a'.repeat(92)}`);
    assert.ok(sent.cutShort, 'closed while the client was still sending its head');
    assert.ok(sent.closedAfter >= 900, `closed after ${sent.closedAfter} ms`);
    if (sent.lost) return; // the answer was discarded by the reset (Exchange.lost): the close is checked
    const [answer, ...more] = answers(sent.text);
    assert.equal(answer?.status, 408);
    assert.equal(more.length, 0);
    assert.match(answer?.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(answer?.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assertErrorBody(answer?.body ?? '', 'invalid_request');
  });

  for (const [method, path, status] of [
    ['OPTIONS', '/api/v1/games', 204],
    ['GET', '/api/v1/games', 200],
    ['POST', '/api/v1/games', 405],
    ['DELETE', '/nowhere', 404],
  ] as const) {
    test(`${method} ${path} with a declared body sent a byte at a time: answered, then closed at the timeout`, async () => {
      const head =
        `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${seeded.tokens.alice}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
      const sent = await exchange(head, '{'.repeat(100));
      const [answer, ...late] = answers(sent.text);
      assert.equal(answer?.status, status, sent.text.slice(0, 300));
      // What comes after the answer, if anything, is Node's 408 for the request never finished.
      for (const extra of late) assert.equal(extra.status, 408);
      // The body would take 20 s to come in whole: the server does not wait for it.
      assert.ok(sent.cutShort, 'closed while the client was still sending its body');
      assert.ok(sent.closedAfter >= 900, `closed after ${sent.closedAfter} ms`);
    });
  }
});

describe('OPTIONS', () => {
  const bodies: [string, Record<string, string>][] = [
    ['broken JSON', { 'content-type': 'application/json' }],
    ['an unknown media type', { 'content-type': 'application/x-unknown' }],
    ['no media type', {}],
  ];
  for (const [what, given] of bodies) {
    test(`with ${what} in the body: 204 and Allow on an API path, 404 elsewhere`, async () => {
      // Named: node:http frames no body of its own on OPTIONS.
      const headers = { ...given, 'content-length': '4' };
      const api = await raw(server.base, '/api/v1/games', { method: 'OPTIONS', headers, body: '{bad' });
      assert.equal(api.status, 204);
      assert.equal(header(api, 'allow'), 'GET, HEAD, OPTIONS');
      for (const path of ['/nowhere', '/api/v1/nowhere', '/healthz']) {
        const answer = await raw(server.base, path, { method: 'OPTIONS', headers, body: '{bad' });
        assert.equal(answer.status, 404, path);
        assertErrorBody(answer.body.toString(), 'not_found');
      }
    });
  }
});

describe('Host', () => {
  test('an HTTP/1.1 request without Host is 400 in the error shape, with a request id', async () => {
    const sent = await exchange('GET /api/v1/games HTTP/1.1\r\n\r\n');
    const [answer, ...more] = answers(sent.text);
    assert.equal(answer?.status, 400);
    assert.equal(more.length, 0);
    assert.match(answer?.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(answer?.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assertErrorBody(answer?.body ?? '', 'invalid_request');
    // Closed after the answer, not at the request timeout.
    assert.equal(answer?.headers.get('connection'), 'close');
  });

  test('HTTP/1.0 needs none', async () => {
    const sent = await exchange(
      `GET /api/v1/me HTTP/1.0\r\nAuthorization: Bearer ${seeded.tokens.alice}\r\n\r\n`,
    );
    assert.equal(answers(sent.text)[0]?.status, 200);
  });
});

describe('CORS', () => {
  test('API answers and the OpenAPI document carry CORS headers; probes, metrics and the docs page do not', async () => {
    const origin = { origin: 'https://app.example' };
    const api = await raw(server.base, '/api/v1/me', {
      headers: { ...origin, ...bearer(seeded.tokens.alice) },
    });
    assert.equal(header(api, 'access-control-allow-origin'), '*');
    const document = await raw(server.base, '/api/v1/openapi.json', { headers: origin });
    assert.equal(header(document, 'access-control-allow-origin'), '*');
    for (const path of ['/metrics', '/readyz', '/healthz', '/livez', '/docs/']) {
      const answer = await raw(server.base, path, { headers: origin });
      assert.equal(header(answer, 'access-control-allow-origin'), '', path);
      const preflight = await raw(server.base, path, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'GET' },
      });
      assert.equal(header(preflight, 'access-control-allow-origin'), '', `preflight ${path}`);
      assert.notEqual(preflight.status, 204, `preflight ${path}`);
    }
  });
});

describe('docs', () => {
  test('/docs/static/index.html redirects to the page, with or without a query', async () => {
    for (const query of ['', '?x=1']) {
      const answer = await raw(server.base, `/docs/static/index.html${query}`);
      assert.equal(answer.status, 302, query);
      assert.equal(header(answer, 'location'), '/docs/', query);
      assert.equal((await raw(server.base, header(answer, 'location'))).status, 200, query);
    }
  });

  test("the page's files in each coding asked for, the same bytes every time, with their length", async () => {
    // Compressed once and kept (docs.ts), not on every request: the bundle is 1.7 MB.
    const path = '/docs/static/swagger-ui-bundle.js';
    const file = readFileSync(
      join(import.meta.dirname, '../../node_modules/@fastify/swagger-ui/static/swagger-ui-bundle.js'),
    );
    const decode = { br: brotliDecompressSync, gzip: gunzipSync, identity: (b: Buffer) => b };
    for (const coding of ['br', 'gzip', 'identity'] as const) {
      const headers = { 'accept-encoding': coding };
      const [first, second] = [
        await raw(server.base, path, { headers }),
        await raw(server.base, path, { headers }),
      ];
      assert.equal(first.status, 200, coding);
      assert.equal(header(first, 'content-encoding') || 'identity', coding);
      assert.equal(Number(header(first, 'content-length')), first.body.length, coding);
      assert.ok(decode[coding](first.body).equals(file), `${coding} decodes to the file`);
      assert.ok(second.body.equals(first.body), `${coding}: the same bytes again`);
      // Another spelling of the name is the same file, served alike (docs.ts keeps one copy for both).
      const spelled = await raw(server.base, path.replace('swagger', '%73wagger'), { headers });
      assert.ok(spelled.body.equals(first.body), `${coding}: the same bytes for %73wagger`);
      if (coding !== 'identity') {
        assert.match(header(first, 'vary'), /accept-encoding/i);
        assert.ok(first.body.length < file.length / 3, `${coding}: ${first.body.length} bytes`);
        const head = await raw(server.base, path, { method: 'HEAD', headers });
        assert.equal(header(head, 'content-encoding'), coding);
        assert.equal(Number(header(head, 'content-length')), first.body.length);
      }
    }
  });
});
