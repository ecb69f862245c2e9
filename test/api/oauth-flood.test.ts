// What an anonymous client can do to the OAuth server: a visit to a page keeps nothing (no session before a
// sign-in); every path answers a flood from one address with 429s; and the rows that requests starting a
// flow leave (an interaction, a device code) are bounded per address. The server trusts X-Forwarded-For from
// loopback (TRUST_PROXY), so each client of a test stands at an address of its own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Env, settledLog, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  addClient,
  addUserWithPassword,
  authorizeUrl,
  type Client,
  enterDeviceCode,
  FormBrowser,
  field,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';
import { queryStore } from '../helpers/stores.ts';

const WEB_REDIRECT = 'https://app.example.org/callback';

/** The store's OAuth records per model: {Interaction: 2, ...}. */
async function recordsByModel(env: Env): Promise<Record<string, number>> {
  const rows = await queryStore<{ model: string; n: number }>(
    env.databaseUrl,
    'select model, cast(count(*) as integer) as n from oauth_records group by model',
  );
  return Object.fromEntries(rows.map((r) => [r.model, Number(r.n)]));
}

describe('OAuth: anonymous visits keep nothing', () => {
  let env: Env;
  let server: InProcessServer;
  let base: string;
  let web: Client;
  let device: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    web = await addClient(env, 'Web', ['--redirect-uri', WEB_REDIRECT]);
    device = await addClient(env, 'Chess CLI', ['--device', '--public']);
    server = await serveInProcess(env, { TRUST_PROXY: 'loopback' });
    base = server.base;
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  async function startDevice(): Promise<string> {
    const started = await tokenRequest(
      base,
      { client_id: device.clientId, scope: 'user.read' },
      undefined,
      '/oauth/device/auth',
    );
    assert.equal(started.status, 200, JSON.stringify(started.json));
    return String(started.json.user_code);
  }

  test('the device code page, its wrong codes and the sign-in page store no session', async () => {
    const browser = new FormBrowser({ 'x-forwarded-for': '203.0.113.1' });
    for (let i = 0; i < 3; i++) {
      const entry = await browser.request(`${base}/oauth/device`);
      assert.equal(entry.status, 200);
      const wrong = await browser.request(`${base}/oauth/device`, {
        form: { xsrf: field(entry.text, 'xsrf'), user_code: 'BCDF-GHJK' },
      });
      assert.equal(wrong.status, 200);
      assert.match(wrong.text, /That code is wrong/);
      assert.equal((await new FormBrowser().request(`${base}/oauth/device`)).status, 200);
      assert.equal((await new FormBrowser().request(`${base}/account/signin`)).status, 200);
      assert.equal((await browser.request(`${base}/account/signin`)).status, 200);
    }
    // A form posted without any cookie, and a device page's resume without its cookie: pages, no 500.
    const bare = await new FormBrowser().request(`${base}/oauth/device`, {
      form: { xsrf: 'x', user_code: 'BCDF-GHJK' },
    });
    assert.equal(bare.status, 400);
    assert.match(bare.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal((await new FormBrowser().request(`${base}/oauth/device/abc`)).status, 400);
    assert.deepEqual(await recordsByModel(env), {});
    assert.doesNotMatch(await settledLog(server), /"level":(50|60)|^\s+at /m);
  });

  test('an authorization request keeps its interaction, and no session', async () => {
    const before = await recordsByModel(env);
    const page = await new FormBrowser({ 'x-forwarded-for': '203.0.113.2' }).follow(
      authorizeUrl(base, {
        clientId: web.clientId,
        redirectUri: WEB_REDIRECT,
        scope: 'user.read',
        pkce: pkce(),
      }),
      base,
    );
    assert.match(page.page.text, /name="password"/);
    const now = await recordsByModel(env);
    assert.equal(now.Interaction, (before.Interaction ?? 0) + 1);
    assert.equal(now.Session, undefined);
  });

  test('the device flow works as before: the code from the link, confirmed, signed in, allowed', async () => {
    const userCode = await startDevice();
    const browser = new FormBrowser({ 'x-forwarded-for': '203.0.113.3' });
    // verification_uri_complete: the page posts the code itself, with the form's token.
    const link = await browser.request(`${base}/oauth/device?user_code=${encodeURIComponent(userCode)}`);
    assert.equal(link.status, 200);
    const confirm = await browser.request(`${base}/oauth/device`, {
      form: { xsrf: field(link.text, 'xsrf'), user_code: field(link.text, 'user_code') },
    });
    assert.match(confirm.text, /Check that the device shows this code/);
    assert.equal((await recordsByModel(env)).Session, undefined);
    // The whole flow from a fresh browser, which signs in: its session is kept from then on.
    const done = await enterDeviceCode(
      new FormBrowser({ 'x-forwarded-for': '203.0.113.4' }),
      base,
      await startDevice(),
    );
    assert.match(done.text, /Device connected/);
    assert.ok(((await recordsByModel(env)).Session ?? 0) >= 1);
  });
});

/** Requests a flooding client sends, one per path: what each answers when it is let through is beside the point. */
interface Probe {
  name: string;
  shape: 'json' | 'page';
  send(base: string, address: string): Promise<Response>;
}

const post = (base: string, path: string, address: string, body: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'x-forwarded-for': address, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
    redirect: 'manual',
  });
const get = (base: string, path: string, address: string) =>
  fetch(`${base}${path}`, { headers: { 'x-forwarded-for': address }, redirect: 'manual' });

const PROBES: Probe[] = [
  { name: 'GET /oauth/authorize', shape: 'page', send: (b, a) => get(b, '/oauth/authorize?client_id=x', a) },
  {
    name: 'POST /oauth/token',
    shape: 'json',
    send: (b, a) =>
      post(b, '/oauth/token', a, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'x' }),
  },
  { name: 'POST /oauth/revoke', shape: 'json', send: (b, a) => post(b, '/oauth/revoke', a, { token: 'x' }) },
  {
    name: 'POST /oauth/device/auth',
    shape: 'json',
    send: (b, a) => post(b, '/oauth/device/auth', a, { client_id: 'x' }),
  },
  { name: 'GET /oauth/jwks', shape: 'json', send: (b, a) => get(b, '/oauth/jwks', a) },
  { name: 'GET /oauth/device', shape: 'page', send: (b, a) => get(b, '/oauth/device', a) },
  {
    name: 'POST /oauth/device',
    shape: 'page',
    send: (b, a) => post(b, '/oauth/device', a, { xsrf: 'x', user_code: 'BCDF-GHJK' }),
  },
  { name: 'GET /oauth/device/<uid>', shape: 'page', send: (b, a) => get(b, '/oauth/device/x', a) },
  { name: 'GET /oauth/authorize/<uid>', shape: 'page', send: (b, a) => get(b, '/oauth/authorize/x', a) },
  { name: 'GET /oauth/interaction/<uid>', shape: 'page', send: (b, a) => get(b, '/oauth/interaction/x', a) },
  {
    name: 'POST /oauth/interaction/<uid>/login',
    shape: 'page',
    send: (b, a) => post(b, '/oauth/interaction/x/login', a, { login: 'ann', password: 'x' }),
  },
  { name: 'GET /account', shape: 'page', send: (b, a) => get(b, '/account', a) },
  { name: 'GET /account/signin', shape: 'page', send: (b, a) => get(b, '/account/signin', a) },
  {
    name: 'POST /account/signin',
    shape: 'page',
    send: (b, a) => post(b, '/account/signin', a, { login: 'ann', password: 'x' }),
  },
  {
    name: 'POST /account/revoke',
    shape: 'page',
    send: (b, a) => post(b, '/account/revoke', a, { grant: 'x' }),
  },
];

/** Checks a 429 in the shape of its path: RFC 6749's JSON error, or a page; both with Retry-After. */
async function assertRefused(answer: Response, probe: Probe): Promise<void> {
  const text = await answer.text();
  assert.equal(answer.status, 429, `${probe.name}: ${answer.status} ${text.slice(0, 200)}`);
  const retryAfter = Number(answer.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `${probe.name}: Retry-After ${retryAfter}`);
  if (probe.shape === 'json') {
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, probe.name);
    const body = JSON.parse(text) as Record<string, unknown>;
    assert.equal(body.error, 'rate_limited', probe.name);
    assert.equal(typeof body.error_description, 'string', probe.name);
  } else {
    assert.match(answer.headers.get('content-type') ?? '', /^text\/html/, probe.name);
    assert.match(
      text,
      /role="alert">Too many requests from your network\. Try again in 1 minute\./,
      probe.name,
    );
    assert.equal(answer.headers.get('cache-control'), 'no-store', probe.name);
  }
}

describe('OAuth: the OAuth and account paths are limited per client address', () => {
  const MAX = 12;
  let env: Env;
  let server: InProcessServer;

  before(async () => {
    env = tempEnv();
    server = await serveInProcess(env, {
      TRUST_PROXY: 'loopback',
      OAUTH_RATE_LIMIT_MAX: String(MAX),
      OAUTH_RATE_LIMIT_WINDOW: '60s',
      OAUTH_FLOWS_PER_ADDRESS: '1000',
    });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('a flood from one address gets 429 on each path, one after the limit; another address does not', async () => {
    for (const [i, probe] of PROBES.entries()) {
      const address = `198.51.100.${i + 1}`;
      for (let n = 0; n < MAX; n++) {
        const answer = await probe.send(server.base, address);
        await answer.arrayBuffer();
        assert.notEqual(answer.status, 429, `${probe.name}: request ${n + 1} of ${MAX}`);
      }
      await assertRefused(await probe.send(server.base, address), probe);
      const other = await probe.send(server.base, `198.51.100.${i + 101}`);
      await other.arrayBuffer();
      assert.notEqual(other.status, 429, `${probe.name} from another address`);
    }
  });

  test('a concurrent burst from one address gets exactly the limit through', async () => {
    const [probe] = PROBES.filter((p) => p.name === 'GET /account/signin');
    assert.ok(probe);
    const answers = await Promise.all(
      Array.from({ length: 3 * MAX }, () => probe.send(server.base, '192.0.2.77')),
    );
    for (const answer of answers) await answer.arrayBuffer();
    assert.equal(answers.filter((a) => a.status === 429).length, 2 * MAX);
    assert.equal(answers.filter((a) => a.status === 200).length, MAX);
  });

  test('the API does not share the budget: /api/v1 answers an address the OAuth paths refuse', async () => {
    const address = '192.0.2.88';
    for (let n = 0; n <= MAX; n++) await (await get(server.base, '/account/signin', address)).arrayBuffer();
    assert.equal((await get(server.base, '/account/signin', address)).status, 429);
    assert.equal((await get(server.base, '/api/v1/me', address)).status, 401);
  });
});

describe('OAuth: what one address can leave in the store is bounded', () => {
  const FLOWS = 5;
  let env: Env;
  let server: InProcessServer;
  let web: Client;
  let device: Client;

  before(async () => {
    env = tempEnv();
    web = await addClient(env, 'Web', ['--redirect-uri', WEB_REDIRECT]);
    device = await addClient(env, 'Chess CLI', ['--device', '--public']);
    server = await serveInProcess(env, {
      TRUST_PROXY: 'loopback',
      OAUTH_FLOWS_PER_ADDRESS: String(FLOWS),
    });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  const authorize = (address: string) =>
    get(
      server.base,
      new URL(
        authorizeUrl(server.base, {
          clientId: web.clientId,
          redirectUri: WEB_REDIRECT,
          scope: 'user.read',
          pkce: pkce(),
        }),
      ).href.slice(server.base.length),
      address,
    );
  const deviceAuth = (address: string) =>
    post(server.base, '/oauth/device/auth', address, { client_id: device.clientId, scope: 'user.read' });
  const rows = async () => {
    const byModel = await recordsByModel(env);
    return (byModel.Interaction ?? 0) + (byModel.DeviceCode ?? 0) + (byModel.Session ?? 0);
  };

  test('authorization requests and device authorizations share a budget per hour; past it, 429 and no row', async () => {
    const address = '203.0.113.50';
    for (let n = 0; n < FLOWS; n++) {
      const answer = n % 2 === 0 ? await authorize(address) : await deviceAuth(address);
      await answer.arrayBuffer();
      assert.ok(answer.status === 303 || answer.status === 200, `flow ${n + 1}: ${answer.status}`);
    }
    assert.equal(await rows(), FLOWS);
    const page = await authorize(address);
    assert.equal(page.status, 429);
    assert.match(await page.text(), /Too many requests from your network\. Try again in [0-9]+ minutes?\./);
    const retryAfter = Number(page.headers.get('retry-after'));
    assert.ok(retryAfter > 60 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    const json = await deviceAuth(address);
    assert.equal(json.status, 429);
    assert.equal(((await json.json()) as { error: string }).error, 'rate_limited');
    assert.equal(await rows(), FLOWS);
    // Another address starts its own.
    const other = await deviceAuth('203.0.113.51');
    assert.equal(other.status, 200);
    assert.equal(await rows(), FLOWS + 1);
  });

  test('a flow resumed again and again counts each time: its interaction cannot be kept alive for ever', async () => {
    const before = (await recordsByModel(env)).Interaction ?? 0;
    const browser = new FormBrowser({ 'x-forwarded-for': '203.0.113.80' });
    const uidOf = (page: { headers: Headers }) =>
      /\/oauth\/interaction\/([^/?]+)$/.exec(page.headers.get('location') ?? '')?.[1];
    const started = await browser.request(
      authorizeUrl(server.base, {
        clientId: web.clientId,
        redirectUri: WEB_REDIRECT,
        scope: 'user.read',
        pkce: pkce(),
      }),
    );
    let uid = uidOf(started);
    let steps = 1;
    for (; steps <= FLOWS; steps++) {
      assert.ok(uid, `step ${steps}: ${started.status}`);
      const resumed = await browser.request(`${server.base}/oauth/authorize/${uid}`);
      if (resumed.status === 429) break;
      assert.equal(resumed.status, 303, `resumption ${steps}`);
      uid = uidOf(resumed);
    }
    assert.equal(steps, FLOWS, 'the authorization request and its resumptions share the budget');
    // Each resumption replaced the interaction: one is left.
    assert.equal(((await recordsByModel(env)).Interaction ?? 0) - before, 1);
  });

  test('a concurrent burst of authorization requests leaves at most the budget', async () => {
    const before = await rows();
    const answers = await Promise.all(Array.from({ length: 4 * FLOWS }, () => authorize('203.0.113.60')));
    for (const answer of answers) await answer.arrayBuffer();
    assert.equal(answers.filter((a) => a.status === 303).length, FLOWS);
    assert.equal(answers.filter((a) => a.status === 429).length, 3 * FLOWS);
    assert.equal((await rows()) - before, FLOWS);
  });
});

describe('OAuth: the limits are shared through Redis', {
  skip: process.env.TEST_REDIS_URL ? false : 'set TEST_REDIS_URL to run',
}, () => {
  const MAX = 6;
  let env: Env;
  let one: InProcessServer;
  let two: InProcessServer;

  before(async () => {
    env = tempEnv();
    const shared = {
      TRUST_PROXY: 'loopback',
      REDIS_URL: process.env.TEST_REDIS_URL,
      REDIS_PREFIX: `chessport-test-${randomUUID()}:`,
      OAUTH_RATE_LIMIT_MAX: String(MAX),
    };
    one = await serveInProcess(env, shared);
    two = await serveInProcess(env, shared);
  });
  after(async () => {
    await one?.stop();
    await two?.stop();
    env?.cleanup();
  });

  test('requests of one address on either instance count against one budget', async () => {
    for (let n = 0; n < MAX; n++) {
      const answer = await get(n % 2 === 0 ? one.base : two.base, '/account/signin', '203.0.113.70');
      await answer.arrayBuffer();
      assert.equal(answer.status, 200, `request ${n + 1}`);
    }
    for (const server of [one, two]) {
      assert.equal((await get(server.base, '/account/signin', '203.0.113.70')).status, 429);
    }
  });
});
