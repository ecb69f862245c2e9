// What an anonymous client can make the OAuth server keep: nothing for a visit to a page (no session before a
// sign-in). The server trusts X-Forwarded-For from loopback (TRUST_PROXY), so each client of a test stands at
// an address of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Env, type Server, settledLog, startServer, tempEnv } from '../helpers/harness.ts';
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
  let server: Server;
  let base: string;
  let web: Client;
  let device: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    web = await addClient(env, 'Web', ['--redirect-uri', WEB_REDIRECT]);
    device = await addClient(env, 'Chess CLI', ['--device', '--public']);
    server = await startServer(env, { TRUST_PROXY: 'loopback' });
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
