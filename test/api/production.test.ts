// Production HTTP against the real server: rate limits and their headers, conditional requests, CORS,
// compression, request ids, token-free logs, probes and metrics. The servers run in the test's process
// (world.ts, serveInProcess); `chessport serve` runs as a child process where its stdout is the subject (a
// log reader that has gone).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { matchesIfNoneMatch } from '../../src/api/plugins/conditional.ts';
import { BIN, cliJson } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  bearer,
  captureOutput,
  header,
  type RawAnswer,
  raw,
  waitFor,
  writeGames,
} from '../helpers/production.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
let limited: InProcessServer; // the same store, RATE_LIMIT_MAX=5, behind a (loopback) proxy
before(async () => {
  world = await makeWorld();
  limited = await serveInProcess(world.env, {
    RATE_LIMIT_MAX: '5',
    RATE_LIMIT_WINDOW: '60s',
    TRUST_PROXY: 'loopback',
  });
});
after(async () => {
  await limited?.stop();
  await world?.stop();
});

const api = (path: string) => `/api/v1${path}`;
const get = (path: string, headers: Record<string, string> = {}, base = world.server.base) =>
  raw(base, api(path), { headers });

function assertErrorShape(answer: RawAnswer, status: number, code: string) {
  assert.equal(answer.status, status);
  assert.match(header(answer, 'content-type'), /^application\/json/);
  const body = JSON.parse(answer.body.toString()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, code);
}

/** The X- headers and the draft's RateLimit-Policy / RateLimit fields, checked against each other. */
function assertRateLimitHeaders(answer: RawAnswer, limit: number, policy: string, what: string) {
  assert.equal(header(answer, 'x-ratelimit-limit'), String(limit), what);
  const remaining = Number(header(answer, 'x-ratelimit-remaining'));
  const reset = Number(header(answer, 'x-ratelimit-reset'));
  assert.ok(remaining >= 0 && remaining < limit, `${what}: remaining ${remaining}`);
  assert.ok(reset >= 1 && reset <= 60, `${what}: reset ${reset}`);
  assert.equal(header(answer, 'ratelimit-policy'), `"${policy}";q=${limit};w=60`, what);
  assert.equal(header(answer, 'ratelimit'), `"${policy}";r=${remaining};t=${reset}`, what);
  return remaining;
}

describe('rate limits', () => {
  test('every authenticated answer carries the rate-limit headers: 200, 304, 400, 403, 404', async () => {
    const alice = bearer(world.tokens.alice);
    const ok = await get('/games?limit=2', alice);
    assert.equal(ok.status, 200);
    const answers: [string, RawAnswer][] = [
      ['200', ok],
      ['304', await get('/games?limit=2', { ...alice, 'if-none-match': header(ok, 'etag') })],
      ['400', await get('/games?limit=0', alice)],
      ['403', await get('/games', bearer(world.tokens.aliceMeOnly))],
      ['404', await get(`/games/${randomUUID()}`, alice)],
      ['200 PGN', await get(`/databases/${world.alice.main.slug}/games?format=pgn`, alice)],
    ];
    let previous = Number.POSITIVE_INFINITY;
    for (const [what, answer] of answers) {
      assert.equal(answer.status, Number(what.slice(0, 3)), what);
      const remaining = assertRateLimitHeaders(answer, 600, 'app-user', what);
      if (what === '304') {
        // A 304 does not spend the limit: it shows the budget the 200 before it left.
        assert.equal(remaining, previous, what);
      } else if (what !== '403') {
        // alice's app-one tokens share one bucket, so the count goes down request by request.
        assert.ok(remaining < previous, `${what}: ${remaining} after ${previous}`);
        previous = remaining;
      }
      assert.match(header(answer, 'cache-control'), /\bprivate\b/, what);
      assert.match(header(answer, 'vary'), /\bauthorization\b/i, what);
    }
  });

  test('the request after the limit is 429 rate_limited with Retry-After; the limit is per app and user', async () => {
    const base = limited.base;
    for (let i = 1; i <= 5; i++) {
      const answer = await get('/me', bearer(world.tokens.alice), base);
      assert.equal(answer.status, 200);
      assert.equal(assertRateLimitHeaders(answer, 5, 'app-user', `request ${i}`), 5 - i);
    }
    const over = await get('/me', bearer(world.tokens.alice), base);
    assertErrorShape(over, 429, 'rate_limited');
    const retryAfter = Number(header(over, 'retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(header(over, 'x-ratelimit-remaining'), '0');
    assert.equal(header(over, 'x-ratelimit-reset'), String(retryAfter));

    // Another token of the same app and user shares the bucket: the limit is not per token.
    assertErrorShape(await get('/me', bearer(world.tokens.alice2), base), 429, 'rate_limited');
    // The same user through another app, and another user of the same app, each have their own.
    for (const token of [world.tokens.aliceOtherApp, world.tokens.bob]) {
      const answer = await get('/me', bearer(token), base);
      assert.equal(answer.status, 200);
      assert.equal(header(answer, 'x-ratelimit-remaining'), '4');
    }
  });

  test('requests without a valid token are limited per client address, so token guessing is throttled', async () => {
    const base = limited.base;
    const guesses = ['cp_guess1', 'cp_guess2', 'garbage', 'cp_guess3', 'cp_guess4'];
    for (const [i, guess] of guesses.entries()) {
      const answer = await get('/games', bearer(guess), base);
      assertErrorShape(answer, 401, 'invalid_token');
      assert.equal(assertRateLimitHeaders(answer, 5, 'client-address', guess), 4 - i);
    }
    // A missing token counts against the same address.
    const over = await get('/games', {}, base);
    assertErrorShape(over, 429, 'rate_limited');
    assert.ok(Number(header(over, 'retry-after')) >= 1);
    // A spent address is refused before any token is looked up: a valid one gets the same 429.
    const valid = await get('/databases', bearer(world.tokens.bob), base);
    assertErrorShape(valid, 429, 'rate_limited');
    assert.equal(assertRateLimitHeaders(valid, 5, 'client-address', 'valid token'), 0);
  });

  test('a spent address gets 429 whatever its token; a valid token does not count against the address', async () => {
    const from = { 'x-forwarded-for': '192.0.2.50' };
    const me = (token?: string) => get('/me', { ...from, ...(token ? bearer(token) : {}) }, limited.base);
    // Valid tokens are counted per app and user only: the address still has its 5 after them.
    for (const token of [world.tokens.bob, world.tokens.aliceOtherApp]) {
      const answer = await me(token);
      assert.equal(answer.status, 200);
      assert.match(header(answer, 'ratelimit-policy'), /^"app-user"/);
    }
    for (let i = 1; i <= 5; i++) {
      const answer = await me(`cp_wrong${i}`);
      assertErrorShape(answer, 401, 'invalid_token');
      assert.equal(assertRateLimitHeaders(answer, 5, 'client-address', `guess ${i}`), 5 - i);
    }
    // Spent: a wrong guess, a right one, another user's, a malformed one and none all look alike.
    const answers = await Promise.all(
      [undefined, 'cp_wrong6', world.tokens.bob, world.tokens.aliceOtherApp, '%%%'].map((t) => me(t)),
    );
    for (const answer of answers) {
      assertErrorShape(answer, 429, 'rate_limited');
      assert.equal(assertRateLimitHeaders(answer, 5, 'client-address', 'spent'), 0);
      const retryAfter = Number(header(answer, 'retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(header(answer, 'www-authenticate'), '', 'nothing says whether the token was valid');
    }
    // Another address is not affected.
    const other = await get(
      '/me',
      { ...bearer(world.tokens.bob), 'x-forwarded-for': '192.0.2.51' },
      limited.base,
    );
    assert.equal(other.status, 200);
  });
  test('behind a trusted proxy the client address comes from X-Forwarded-For; otherwise it is ignored', async () => {
    for (const client of ['198.51.100.7', '203.0.113.9']) {
      const headers = { ...bearer('cp_wrong'), 'x-forwarded-for': client };
      for (let i = 1; i <= 5; i++) {
        const answer = await get('/me', headers, limited.base);
        assert.equal(answer.status, 401);
        assert.equal(header(answer, 'x-ratelimit-remaining'), String(5 - i), client);
      }
      assertErrorShape(await get('/me', headers, limited.base), 429, 'rate_limited');
    }
    // Not trusted: a client cannot pick a fresh bucket by sending a header.
    const first = await get('/me', { 'x-forwarded-for': '198.51.100.1' });
    const second = await get('/me', { 'x-forwarded-for': '198.51.100.2' });
    assert.equal(
      Number(header(second, 'x-ratelimit-remaining')),
      Number(header(first, 'x-ratelimit-remaining')) - 1,
    );
  });
});

describe('which 304s spend the rate limit', () => {
  /** A server of its own, with `max` requests per 60 s. */
  async function limitedTo(max: number) {
    const server = await serveInProcess(world.env, { RATE_LIMIT_MAX: String(max), RATE_LIMIT_WINDOW: '60s' });
    const alice = bearer(world.tokens.alice);
    const at = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      raw(server.base, api(path), { method, headers: { ...alice, ...headers } });
    return { server, at };
  }

  test('a 304 on a tag had without reading the answer gives its count back: the export, a kept list page, HEAD', async () => {
    const { server, at } = await limitedTo(12);
    try {
      const paths = [
        '/games?limit=2',
        `/databases/${world.alice.main.id}/games?limit=3`,
        `/databases/${world.alice.main.slug}/games?format=pgn`,
      ];
      const tags = new Map<string, string>();
      for (const path of paths) {
        const first = await at(path);
        assert.equal(first.status, 200, path);
        tags.set(path, header(first, 'etag'));
      }
      // 3 of 12 spent: each 304 takes one of the 9 left and gives it back.
      for (const path of paths) {
        for (const method of ['GET', 'HEAD', 'GET']) {
          const again = await at(path, { 'if-none-match': tags.get(path) as string }, method);
          assert.equal(again.status, 304, `${method} ${path}`);
          assert.equal(assertRateLimitHeaders(again, 12, 'app-user', `${method} ${path}`), 9, 'unspent');
        }
      }
      for (let left = 8; left >= 0; left--)
        assert.equal(header(await at('/me'), 'x-ratelimit-remaining'), `${left}`);
      // Counted before anything else: with the budget spent, a request that would be 304 is 429.
      const refused = await at(paths[0] as string, {
        'if-none-match': tags.get(paths[0] as string) as string,
      });
      assert.equal(refused.status, 429);
    } finally {
      await server.stop();
    }
  });

  test('a 304 that took reading and hashing the answer is counted: the feed, expanded or not, a game, /me', async () => {
    const { server, at } = await limitedTo(20);
    try {
      const gameId = (JSON.parse((await at('/games?limit=1')).body.toString()) as { data: { id: string }[] })
        .data[0]?.id;
      const paths = ['/changes?expand=game&limit=3', '/changes?limit=3', `/games/${gameId}`, '/me'];
      let left = 19;
      for (const path of paths) {
        const first = await at(path);
        assert.equal(header(first, 'x-ratelimit-remaining'), String(--left), path);
        for (const method of ['GET', 'HEAD']) {
          const again = await at(path, { 'if-none-match': header(first, 'etag') }, method);
          assert.equal(again.status, 304, `${method} ${path}`);
          assert.equal(assertRateLimitHeaders(again, 20, 'app-user', `${method} ${path}`), --left);
        }
      }
    } finally {
      await server.stop();
    }
  });

  test('If-None-Match: * is 304 but never free: with a limit of 20, 40 such requests get 429 once it is spent', async () => {
    const { server, at } = await limitedTo(20);
    try {
      const paths = [
        '/changes?expand=game&limit=500',
        '/games?limit=2',
        `/databases/${world.alice.main.slug}/games?format=pgn`,
      ];
      // The list page kept by a first answer, whose tag * would match without reading a game.
      assert.equal((await at(paths[1] as string)).status, 200);
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        const path = paths[i % paths.length] as string;
        const answer = await at(path, { 'if-none-match': '*' }, i % 4 === 3 ? 'HEAD' : 'GET');
        statuses.push(answer.status);
        if (answer.status === 304) {
          assert.equal(header(answer, 'x-ratelimit-remaining'), String(18 - i), `request ${i}: spent`);
        }
      }
      assert.deepEqual(statuses, [...Array(19).fill(304), ...Array(21).fill(429)]);
    } finally {
      await server.stop();
    }
  });

  test('a forged tag is a 200 and counted; a list of tags with * in it is not free either', async () => {
    const { server, at } = await limitedTo(20);
    try {
      const path = '/games?limit=2';
      const first = await at(path);
      assert.equal(header(first, 'x-ratelimit-remaining'), '19');
      const forged = await at(path, { 'if-none-match': `"${randomUUID().replaceAll('-', '')}"` });
      assert.equal(forged.status, 200);
      assert.equal(header(forged, 'x-ratelimit-remaining'), '18');
      // With the real tag beside *, the tag named is the one that matched: free.
      const named = await at(path, { 'if-none-match': `*, ${header(first, 'etag')}` });
      assert.equal(named.status, 304);
      assert.equal(header(named, 'x-ratelimit-remaining'), '18');
      const starred = await at(path, { 'if-none-match': '"other", *' });
      assert.equal(starred.status, 304);
      assert.equal(header(starred, 'x-ratelimit-remaining'), '17');
    } finally {
      await server.stop();
    }
  });

  test('at most the limit of 304s are free per window: a poller stays within twice the limit', async () => {
    const { server, at } = await limitedTo(20);
    try {
      const path = '/games?limit=2';
      const first = await at(path);
      assert.equal(header(first, 'x-ratelimit-remaining'), '19');
      const conditional = { 'if-none-match': header(first, 'etag') };
      const seen: string[] = [];
      for (let i = 0; i < 60; i++) {
        const answer = await at(path, conditional);
        seen.push(`${answer.status} ${header(answer, 'x-ratelimit-remaining')}`);
      }
      const expected = [
        ...Array(20).fill('304 19'), // given back
        ...Array.from({ length: 19 }, (_, i) => `304 ${18 - i}`), // counted
        ...Array(21).fill('429 0'),
      ];
      assert.deepEqual(seen, expected);
    } finally {
      await server.stop();
    }
  });
});

describe('conditional requests', () => {
  test('a matching If-None-Match gives 304 without a body on every cacheable answer', async () => {
    const alice = bearer(world.tokens.alice);
    const gameId = (
      JSON.parse((await get('/games?limit=1', alice)).body.toString()) as { data: { id: string }[] }
    ).data[0]?.id;
    assert.ok(gameId);
    const paths = [
      '/games',
      '/games?limit=2&offset=1',
      '/databases',
      `/databases/${world.alice.main.id}/games`,
      `/databases/${world.alice.main.slug}/games?format=pgn`,
      `/games/${gameId}`,
      `/games/${gameId}?format=pgn`,
      '/me',
    ];
    const tags = new Set<string>();
    for (const path of paths) {
      const first = await get(path, alice);
      assert.equal(first.status, 200, path);
      const etag = header(first, 'etag');
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/, `${path}: a strong ETag`);
      tags.add(etag);
      const again = await get(path, { ...alice, 'if-none-match': etag });
      assert.equal(again.status, 304, path);
      assert.equal(again.body.length, 0, path);
      assert.equal(header(again, 'etag'), etag, path);
      assert.equal(header(again, 'content-length'), '', `${path}: no Content-Length on a 304`);
      // Weak comparison: W/ and a list are understood; another tag is not a match.
      assert.equal((await get(path, { ...alice, 'if-none-match': `"x", W/${etag}` })).status, 304, path);
      assert.equal((await get(path, { ...alice, 'if-none-match': '"other"' })).status, 200, path);
      const head = await raw(world.server.base, api(path), {
        method: 'HEAD',
        headers: { ...alice, 'if-none-match': etag },
      });
      assert.equal(head.status, 304, `HEAD ${path}`);
    }
    assert.equal(tags.size, paths.length, 'every representation has its own tag (JSON and PGN differ)');
  });

  test('a tag that itself ends in -br or -gzip (base64url can) still matches, in each coding', () => {
    // 1 representation in 262,144 has such a tag: too rare to reach through the server, so checked directly.
    for (const tag of ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAA-br', 'AAAAAAAAAAAAAAAAAAAAAAAAAAA-gzip']) {
      for (const sent of [`"${tag}"`, `W/"${tag}"`, `"${tag}-br"`, `"${tag}-gzip"`, `"x", "${tag}"`]) {
        assert.ok(matchesIfNoneMatch(sent, tag), sent);
      }
      assert.ok(!matchesIfNoneMatch(`"${tag.slice(0, -3)}"`, tag));
    }
  });

  test('the tag depends on the token: another user gets no 304 for the same path', async () => {
    const mine = await get('/databases', bearer(world.tokens.alice));
    const theirs = await get('/databases', {
      ...bearer(world.tokens.bob),
      'if-none-match': header(mine, 'etag'),
    });
    assert.equal(theirs.status, 200);
  });

  test('after an import into the database the lists, the database and its PGN export answer 200 again', async () => {
    const alice = bearer(world.tokens.alice);
    const paths = [
      '/games?limit=200',
      '/databases',
      `/databases/${world.alice.main.id}/games?limit=200`,
      `/databases/${world.alice.main.slug}/games?format=pgn`,
    ];
    const before = new Map<string, string>();
    for (const path of paths) before.set(path, header(await get(path, alice), 'etag'));
    for (const path of paths) {
      const same = await get(path, { ...alice, 'if-none-match': before.get(path) ?? '' });
      assert.equal(same.status, 304, `${path} before the import`);
    }
    const file = writeGames(world.env.dir, 'etag-more.pgn', 2, `Etag ${randomUUID().slice(0, 8)}`);
    await cliJson(world.env, ['import', file, '--user', 'alice', '--database', world.alice.main.slug]);
    for (const path of paths) {
      const changed = await get(path, { ...alice, 'if-none-match': before.get(path) ?? '' });
      assert.equal(changed.status, 200, `${path} after the import`);
      assert.notEqual(header(changed, 'etag'), before.get(path), path);
    }
  });

  test('after `chessport games update` the game detail answers 200 with a new tag', async () => {
    const alice = bearer(world.tokens.alice);
    const list = JSON.parse((await get('/games?limit=200', alice)).body.toString()) as {
      data: { id: string }[];
    };
    const id = list.data.at(-1)?.id as string;
    const detail = await get(`/games/${id}`, alice);
    const pgn = await get(`/games/${id}?format=pgn`, alice);
    const file = writeGames(world.env.dir, 'etag-update.pgn', 1, `Updated ${randomUUID().slice(0, 8)}`);
    await cliJson(world.env, ['games', 'update', id, file]);
    for (const [path, previous] of [
      [`/games/${id}`, detail],
      [`/games/${id}?format=pgn`, pgn],
    ] as const) {
      const answer = await get(path, { ...alice, 'if-none-match': header(previous, 'etag') });
      assert.equal(answer.status, 200, path);
      assert.notEqual(header(answer, 'etag'), header(previous, 'etag'), path);
    }
  });
});

describe('CORS', () => {
  test('a preflight is answered without a token: any origin, GET and HEAD, the request headers apps send', async () => {
    const answer = await raw(world.server.base, api('/games'), {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization, if-none-match',
      },
    });
    assert.equal(answer.status, 204);
    assert.equal(header(answer, 'access-control-allow-origin'), '*');
    assert.equal(header(answer, 'access-control-allow-methods'), 'GET, HEAD');
    const allowed = header(answer, 'access-control-allow-headers').toLowerCase();
    for (const name of ['authorization', 'if-none-match', 'accept']) assert.ok(allowed.includes(name), name);
    assert.equal(header(answer, 'access-control-allow-credentials'), '');
    assert.ok(Number(header(answer, 'access-control-max-age')) > 0);
  });

  test('a plain OPTIONS still names the allowed methods', async () => {
    const answer = await raw(world.server.base, api('/games'), { method: 'OPTIONS' });
    assert.equal(answer.status, 204);
    assert.equal(header(answer, 'allow'), 'GET, HEAD, OPTIONS');
  });

  test('answers let a browser app read the headers it needs', async () => {
    const answer = await get('/games?limit=1', {
      ...bearer(world.tokens.alice),
      origin: 'https://app.example',
    });
    assert.equal(answer.status, 200);
    assert.equal(header(answer, 'access-control-allow-origin'), '*');
    const exposed = header(answer, 'access-control-expose-headers').toLowerCase();
    for (const name of [
      'etag',
      'link',
      'retry-after',
      'content-disposition',
      'x-changes-cursor',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'ratelimit',
      'ratelimit-policy',
      'x-request-id',
    ]) {
      assert.ok(exposed.split(/,\s*/).includes(name), name);
    }
  });
});

describe('compression', () => {
  const decode = (answer: RawAnswer) => {
    const coding = header(answer, 'content-encoding');
    if (coding === 'gzip') return gunzipSync(answer.body).toString();
    if (coding === 'br') return brotliDecompressSync(answer.body).toString();
    assert.equal(coding, '');
    return answer.body.toString();
  };

  for (const path of ['/games?limit=200', 'PGN export']) {
    test(`gzip and br answers decode to the identity body: ${path}`, async () => {
      const target = path === 'PGN export' ? `/databases/${world.alice.main.slug}/games?format=pgn` : path;
      const alice = bearer(world.tokens.alice);
      const plain = await get(target, alice);
      assert.equal(plain.status, 200);
      assert.equal(header(plain, 'content-encoding'), '');
      const tags = new Set([header(plain, 'etag')]);
      for (const coding of ['gzip', 'br']) {
        const answer = await get(target, { ...alice, 'accept-encoding': coding });
        assert.equal(answer.status, 200);
        assert.equal(header(answer, 'content-encoding'), coding);
        assert.match(header(answer, 'vary'), /accept-encoding/i);
        assert.equal(decode(answer), plain.body.toString(), coding);
        assert.ok(answer.body.length < plain.body.length, `${coding} is smaller`);
        tags.add(header(answer, 'etag'));
      }
      assert.equal(tags.size, 3, 'each coding has its own strong ETag');
    });
  }

  test('HEAD sends the header fields GET sends, compressed or not', async () => {
    const alice = bearer(world.tokens.alice);
    const gameId = (
      JSON.parse((await get('/games?limit=1', alice)).body.toString()) as { data: { id: string }[] }
    ).data[0]?.id;
    const paths = [
      `/games/${gameId}`,
      `/games/${gameId}?format=pgn`,
      '/games?limit=200',
      '/games?limit=1',
      `/databases/${world.alice.main.slug}/games?format=pgn`,
      '/openapi.json',
    ];
    for (const path of paths) {
      for (const coding of ['gzip', 'br', 'identity', 'gzip, br']) {
        const headers = { ...alice, 'accept-encoding': coding };
        const got = await get(path, headers);
        const head = await raw(world.server.base, api(path), { method: 'HEAD', headers });
        assert.equal(head.status, got.status);
        for (const name of ['content-encoding', 'content-length', 'etag', 'vary', 'content-type']) {
          assert.equal(header(head, name), header(got, name), `${path} ${coding}: ${name}`);
        }
      }
    }
  });

  test('br is preferred when the client accepts both; q=0 refuses a coding', async () => {
    const alice = bearer(world.tokens.alice);
    const both = await get('/games?limit=200', { ...alice, 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(header(both, 'content-encoding'), 'br');
    const noBr = await get('/games?limit=200', { ...alice, 'accept-encoding': 'br;q=0, gzip' });
    assert.equal(header(noBr, 'content-encoding'), 'gzip');
  });

  test('a coding named with q=0 is never sent, also when `*` accepts the others (RFC 9110 12.5.3)', async () => {
    // Before: @fastify/compress read `*` as gzip before weighing, so `gzip;q=0, *` got gzip.
    const alice = bearer(world.tokens.alice);
    const cases: [string, string][] = [
      ['gzip;q=0, *', ''],
      ['*;q=0.5, gzip;q=0', ''],
      ['x-gzip;q=0, *', ''],
      ['gzip;q=0, br;q=0.1, *', 'br'],
      ['br;q=0, *', 'gzip'],
      ['*', 'gzip'],
      ['br;q=0.5, gzip;q=0.9', 'gzip'],
      ['gzip;q=0.5, br;q=0.9', 'br'],
      ['gzip, br', 'br'],
      ['identity;q=0', ''], // nothing else offered is acceptable either: identity, not 406
      ['zstd', ''],
    ];
    for (const path of ['/games?limit=200', `/databases/${world.alice.main.slug}/games?format=pgn`]) {
      const tag = header(await get(path, alice), 'etag').slice(0, -1);
      for (const [accept, coding] of cases) {
        const headers = { ...alice, 'accept-encoding': accept };
        const answer = await get(path, headers);
        assert.equal(answer.status, 200);
        assert.equal(header(answer, 'content-encoding'), coding, `${path} ${accept}`);
        // The tag names the coding sent, and HEAD names what GET sends.
        assert.equal(header(answer, 'etag'), `${tag}${coding ? `-${coding}` : ''}"`, `${path} ${accept}`);
        const head = await raw(world.server.base, api(path), { method: 'HEAD', headers });
        assert.equal(header(head, 'content-encoding'), coding, `HEAD ${path} ${accept}`);
        assert.equal(header(head, 'etag'), header(answer, 'etag'), `HEAD ${path} ${accept}`);
      }
    }
  });
});

describe('request ids', () => {
  test('a sane X-Request-Id is echoed; a missing or unsafe one is replaced by a generated one', async () => {
    const sent = `trace-${randomUUID()}`;
    const echoed = await get('/games', { ...bearer(world.tokens.alice), 'x-request-id': sent });
    assert.equal(header(echoed, 'x-request-id'), sent);
    for (const bad of [undefined, '', 'has space', 'x'.repeat(129), 'semi;colon', 'ünicode']) {
      const headers: Record<string, string> = bad === undefined ? {} : { 'x-request-id': bad };
      const answer = await get('/games', headers);
      const id = header(answer, 'x-request-id');
      assert.match(id, /^[0-9a-f-]{36}$/, `generated for ${JSON.stringify(bad)}`);
      assert.notEqual(id, bad);
    }
  });

  test('every answer carries one: errors, 405, unknown paths, probes, preflights', async () => {
    const answers = [
      await raw(world.server.base, '/nowhere'),
      await raw(world.server.base, api('/games'), { method: 'DELETE' }),
      await raw(world.server.base, api('/games?limit=x'), { headers: bearer(world.tokens.alice) }),
      await raw(world.server.base, '/healthz'),
      await raw(world.server.base, api('/me'), {
        method: 'OPTIONS',
        headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' },
      }),
    ];
    for (const answer of answers) assert.match(header(answer, 'x-request-id'), /^[0-9a-f-]{36}$/);
  });
});

describe('logs', () => {
  test('structured lines with the request id, and never a token, whatever the client sends', async () => {
    const server = await serveInProcess(world.env, { LOG_LEVEL: 'trace' });
    try {
      const output = captureOutput(server);
      const id = `log-check-${randomUUID()}`;
      const tokens = Object.values(world.tokens);
      for (const token of tokens) {
        await raw(server.base, api('/games?limit=1'), { headers: { ...bearer(token), 'x-request-id': id } });
      }
      // A client that puts its token in the URL, a malformed header, a write method and a 404.
      await raw(server.base, api(`/games?access_token=${world.tokens.alice}`), {
        headers: bearer(world.tokens.bob),
      });
      await raw(server.base, api(`/games/${world.tokens.alice}`), { headers: bearer(world.tokens.alice) });
      // Percent-encoded, which the server decodes: the prefix, part of the secret, or a parameter's name.
      const secret = world.tokens.alice.slice(3);
      const encoded = `${secret.slice(0, 5)}%${secret.charCodeAt(5).toString(16)}${secret.slice(6)}`;
      for (const target of [
        `/games?x=cp%5F${secret}`,
        `/games?x=%63P_${secret}&limit=1`,
        `/games?x=cp_${encoded}`,
        `/games?acc%65ss_token=${secret}`,
        `/games/%63%70%5f${secret}`,
      ]) {
        await raw(server.base, api(target), { headers: bearer(world.tokens.bob) });
      }
      await raw(server.base, api('/me'), { headers: { authorization: `Basic ${world.tokens.alice}` } });
      // A token as the request id, which would otherwise be on every line of the request (reqId).
      const asId = await raw(server.base, api('/me'), {
        headers: { ...bearer(world.tokens.bob), 'x-request-id': world.tokens.alice },
      });
      assert.match(header(asId, 'x-request-id'), /^[0-9a-f-]{36}$/);
      await raw(server.base, api('/me'), { method: 'POST', headers: bearer(world.tokens.alice) });
      // A path that does not percent-decode is routed with its % escaped; the log shows it as sent.
      const undecodable = `/games/%ZZ${id}`;
      await raw(server.base, api(`${undecodable}%${world.tokens.alice}`), {
        headers: bearer(world.tokens.bob),
      });
      await waitFor('the log lines', () => output.text().split(id).length > tokens.length);
      await new Promise((r) => setTimeout(r, 200));
      const text = output.text();
      for (const token of tokens) {
        assert.ok(!text.includes(token), 'a token is in the logs');
        assert.ok(!text.includes(token.slice(3)), 'a token body is in the logs');
      }
      assert.ok(!text.includes(secret.slice(6)), 'the rest of a token after an escape is in the logs');
      const lines = text.trim().split('\n');
      assert.ok(lines.length > 10);
      for (const line of lines) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        assert.equal(typeof entry.level, 'number');
        assert.equal(typeof entry.msg, 'string');
        if (entry.req || entry.res) assert.equal(typeof entry.reqId, 'string', line);
      }
      assert.ok(lines.some((line) => line.includes(`"reqId":"${id}"`)));
      // One line per request, when its answer ends (Fastify wrote one on arrival and one on completion).
      const ofId = lines.filter((line) => line.includes(`"reqId":"${id}"`));
      assert.equal(ofId.length, tokens.length);
      for (const line of ofId) {
        const entry = JSON.parse(line) as { msg: string; req: { url: string }; res: { statusCode: number } };
        assert.equal(entry.msg, 'request completed');
        assert.equal(entry.req.url, api('/games?limit=1'));
        assert.equal(typeof entry.res.statusCode, 'number');
      }
      assert.ok(lines.some((line) => line.includes(`"url":"${api(undecodable)}%cp_[redacted]"`)));
    } finally {
      await server.stop();
    }
  });
});

describe('logs when nobody reads them', () => {
  test('a server whose log reader has gone (`serve | head -2`) still stops on SIGTERM with exit code 0', async () => {
    // A child process: its stdout is the subject. The server's stdout and stderr go into `head -2`, which
    // exits after the first two lines (the store's, then `Server listening at`): every later log line meets a
    // broken pipe, as when a log shipper dies.
    const head = spawn('head', ['-2'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const server = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      env: { ...world.env.env, LOG_LEVEL: 'info' },
      cwd: world.env.dir,
      stdio: ['ignore', head.stdin, head.stdin],
    });
    const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
    try {
      let first = '';
      head.stdout.on('data', (chunk: Buffer) => {
        first += chunk.toString();
      });
      await new Promise((r) => head.once('exit', r));
      assert.match(first, /"msg":"opened the store"[^\n]*\n[^\n]*listening at/i);
      server.kill('SIGTERM');
      // Against a hang: a server that no longer stops on SIGTERM.
      const timeout = new Promise<string>((r) =>
        setTimeout(() => r('still running 60 s after SIGTERM'), 60_000).unref(),
      );
      assert.equal(await Promise.race([exited, timeout]), 0);
    } finally {
      server.kill('SIGKILL');
    }
  });
});

describe('logs read late', () => {
  test('a log reader that stops reading costs log lines, never the server: the next line says how many', async () => {
    // A child process: its stdout is the subject. The test stops reading it until the pipe is full and every
    // write meets EAGAIN; the server answers on, drops the lines it cannot write, and says so once read again.
    const server = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      env: { ...world.env.env, LOG_LEVEL: 'info' },
      cwd: world.env.dir,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      let output = '';
      const base = await new Promise<string>((resolve, reject) => {
        server.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const listening = /listening at (http:\/\/[0-9.:]+)/i.exec(output);
          if (listening?.[1]) resolve(listening[1]);
        });
        server.once('exit', (code) => reject(new Error(`serve exited (${code}): ${output}`)));
      });
      server.stdout.pause();
      // Each answer logs a line with its URL, here of 2 KB: 300 of them are far more than a pipe and the
      // reader's buffer hold (64 KiB each on Linux).
      const statuses = new Set<number>();
      for (let i = 0; i < 300; i++) {
        const answer = await fetch(`${base}/healthz?round=${i}&pad=${'x'.repeat(2000)}`);
        await answer.arrayBuffer();
        statuses.add(answer.status);
      }
      assert.deepEqual([...statuses], [200], 'every request answered');
      server.stdout.resume();
      const before = output.length;
      const dropped = /"msg":"(\d+) log lines dropped: stdout was full for over a second"/;
      for (let waited = 0; !dropped.test(output.slice(before)); waited += 100) {
        if (waited > 30_000) assert.fail(`no line said how many were dropped: ${output.slice(-2000)}`);
        await (await fetch(`${base}/healthz`)).arrayBuffer();
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(Number(dropped.exec(output.slice(before))?.[1]) > 0);
      assert.equal(server.exitCode, null, 'still running');
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
    } finally {
      server.kill('SIGKILL');
    }
  });
});

describe('probes and metrics', () => {
  test('/healthz and /readyz answer without a token, outside /api/v1', async () => {
    for (const [path, status] of [
      ['/healthz', 'ok'],
      ['/readyz', 'ready'],
    ] as const) {
      const answer = await raw(world.server.base, path);
      assert.equal(answer.status, 200, path);
      assert.deepEqual(JSON.parse(answer.body.toString()), { status });
      assert.equal(header(answer, 'cache-control'), 'no-store');
    }
    assert.equal((await raw(world.server.base, api('/healthz'))).status, 404);
  });

  test('/metrics: requests and latency by route and status, feed counters, process metrics', async () => {
    const alice = bearer(world.tokens.alice);
    await get('/games?limit=1', alice);
    await get(`/games/${randomUUID()}`, alice);
    const feed = JSON.parse((await get('/changes?limit=3', alice)).body.toString()) as { data: unknown[] };
    const answer = await raw(world.server.base, '/metrics');
    assert.equal(answer.status, 200);
    assert.match(header(answer, 'content-type'), /^text\/plain/);
    const text = answer.body.toString();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const games = 'chessport_http_requests_total{method="GET",route="/api/v1/games",status="200"}';
    assert.ok((value(games) ?? 0) >= 1, games);
    const missing = 'chessport_http_requests_total{method="GET",route="/api/v1/games/:id",status="404"}';
    assert.ok((value(missing) ?? 0) >= 1, missing);
    assert.match(
      text,
      /chessport_http_request_duration_seconds_bucket\{le="0\.05",method="GET",route="\/api\/v1\/games",status="200"\} \d+/,
    );
    assert.ok((value('chessport_feed_pages_total') ?? 0) >= 1);
    assert.ok((value('chessport_feed_items_total') ?? 0) >= feed.data.length);
    assert.ok((value('chessport_store_change_sequence') ?? 0) > 0);
    assert.match(text, /^process_resident_memory_bytes \d+/m);
    assert.ok(!text.includes(world.alice.main.id), 'no ids in labels: routes are templates');
  });
});
