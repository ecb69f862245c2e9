// The OAuth authorization server against a real server (in the test's process) on a real store, set up
// through the CLI: the code flow with PKCE through the server's own pages, tokens that the API takes as any
// other, refresh with rotation, revocation, and each refusal a hostile client or page might try.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, http, settledLog, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  action,
  addClient,
  addUserWithPassword,
  authorize,
  authorizeUrl,
  type Client,
  FormBrowser,
  field,
  freePort,
  PASSWORD,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';
import { executeOnStore, queryStore, storeText } from '../helpers/stores.ts';
import { ALICE_PGN } from '../helpers/world.ts';

const WEB_REDIRECT = 'https://app.example.org/callback';
const NATIVE_REDIRECT = 'http://127.0.0.1/callback';

describe('OAuth: the authorization code flow with PKCE', () => {
  let env: Env;
  let server: InProcessServer;
  let base: string;
  let web: Client;
  let native: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    await cliJson(env, ['import', ALICE_PGN, '--user', 'ann', '--database', 'main']);
    await addUserWithPassword(env, 'bob');
    await addUserWithPassword(env, 'pat'); // users passwd's: sessions that end
    web = await addClient(env, 'Web <App>', ['--redirect-uri', WEB_REDIRECT]);
    native = await addClient(env, 'Native', ['--redirect-uri', NATIVE_REDIRECT, '--public']);
    server = await serveInProcess(env);
    base = server.base;
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  const webAuth = () => ({ clientId: web.clientId, clientSecret: web.clientSecret ?? '' });

  async function codeFor(scope = 'user.read games.read', browser = new FormBrowser()) {
    const challenge = pkce();
    const state = 'state-123';
    const back = await authorize(browser, base, {
      clientId: web.clientId,
      redirectUri: WEB_REDIRECT,
      scope,
      state,
      pkce: challenge,
    });
    assert.equal(`${back.origin}${back.pathname}`, WEB_REDIRECT);
    assert.equal(back.searchParams.get('state'), state);
    const code = back.searchParams.get('code');
    assert.ok(code, `no code in ${back}`);
    return { browser, code, verifier: challenge.verifier };
  }

  test('a code, exchanged with its verifier, gives tokens the API takes; refresh rotates', async () => {
    const { code, verifier } = await codeFor();
    const exchanged = await tokenRequest(
      base,
      { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier },
      webAuth(),
    );
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.json));
    assert.equal(exchanged.json.token_type, 'Bearer');
    assert.equal(exchanged.json.expires_in, 3600);
    assert.equal(exchanged.json.scope, 'user.read games.read');
    const access = String(exchanged.json.access_token);
    const refresh = String(exchanged.json.refresh_token);
    const me = await http<{ data: { name: string } }>(base, '/api/v1/me', { token: access });
    assert.equal(me.status, 200);
    assert.equal(me.json.data.name, 'ann Example');
    const games = await http<{ data: unknown[] }>(base, '/api/v1/games', { token: access });
    assert.equal(games.status, 200);
    assert.ok(games.json.data.length > 0);
    // Not granted: databases.read.
    assert.equal((await http(base, '/api/v1/databases', { token: access })).status, 403);
    // A refresh token is no access token.
    assert.equal((await http(base, '/api/v1/me', { token: refresh })).status, 401);

    const refreshed = await tokenRequest(
      base,
      { grant_type: 'refresh_token', refresh_token: refresh },
      webAuth(),
    );
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    assert.notEqual(refreshed.json.refresh_token, refresh);
    assert.equal(
      (await http(base, '/api/v1/me', { token: String(refreshed.json.access_token) })).status,
      200,
    );
  });

  const exchange = (code: string, verifier: string, auth = webAuth()) =>
    tokenRequest(
      base,
      { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier },
      auth,
    );

  async function tokens(scope?: string) {
    const { code, verifier, browser } = await codeFor(scope);
    const answer = await exchange(code, verifier);
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    return { access: String(answer.json.access_token), refresh: String(answer.json.refresh_token), browser };
  }

  const refreshWith = (refresh: string, extra: Record<string, string> = {}) =>
    tokenRequest(base, { grant_type: 'refresh_token', refresh_token: refresh, ...extra }, webAuth());

  test('a redirect URI that is not registered gets an error page, and no redirect', async () => {
    for (const redirectUri of [
      'https://evil.example/callback',
      `${WEB_REDIRECT}/`,
      `${WEB_REDIRECT}?next=1`,
      'https://APP.example.org/callback#x',
    ]) {
      const browser = new FormBrowser();
      const url = authorizeUrl(base, {
        clientId: web.clientId,
        redirectUri,
        scope: 'games.read',
        pkce: pkce(),
      });
      const page = await browser.request(url);
      assert.equal(page.status, 400, redirectUri);
      assert.equal(page.headers.get('location'), null, redirectUri);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(page.text, /redirect_uri/);
      assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    }
  });

  test('PKCE is required, S256 only; a wrong or missing verifier gets no tokens', async () => {
    const browser = new FormBrowser();
    const withoutPkce: Record<string, string>[] = [
      {},
      { code_challenge: pkce().challenge, code_challenge_method: 'plain' },
    ];
    for (const extra of withoutPkce) {
      const url = authorizeUrl(base, {
        clientId: web.clientId,
        redirectUri: WEB_REDIRECT,
        scope: 'games.read',
        state: 's1',
        extra,
      });
      const page = await browser.request(url);
      const location = new URL(page.headers.get('location') ?? '');
      assert.equal(location.searchParams.get('error'), 'invalid_request', JSON.stringify(extra));
      assert.equal(location.searchParams.get('code'), null);
      assert.equal(location.searchParams.get('state'), 's1');
    }
    const { code, verifier } = await codeFor();
    for (const wrong of [pkce().verifier, undefined]) {
      const params: Record<string, string> = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: WEB_REDIRECT,
      };
      if (wrong) params.code_verifier = wrong;
      const answer = await tokenRequest(base, params, webAuth());
      assert.equal(answer.status, 400);
      assert.equal(answer.json.error, 'invalid_grant');
      assert.equal(answer.json.access_token, undefined);
    }
    // A wrong guess does not use the code up for its owner.
    assert.equal((await exchange(code, verifier)).status, 200);
  });

  test('a code used twice: the second fails, and the tokens of the first are revoked', async () => {
    const { code, verifier } = await codeFor();
    const first = await exchange(code, verifier);
    assert.equal(first.status, 200);
    const access = String(first.json.access_token);
    assert.equal((await http(base, '/api/v1/me', { token: access })).status, 200);
    const second = await exchange(code, verifier);
    assert.equal(second.status, 400);
    assert.equal(second.json.error, 'invalid_grant');
    assert.equal((await http(base, '/api/v1/me', { token: access })).status, 401);
    const refreshed = await refreshWith(String(first.json.refresh_token));
    assert.equal(refreshed.json.error, 'invalid_grant');
  });

  test('an expired code is refused', async () => {
    const { code, verifier } = await codeFor();
    // As if its minute had passed.
    await executeOnStore(
      env.databaseUrl,
      "update oauth_records set expires_at = 1 where model = 'AuthorizationCode'",
    );
    const answer = await exchange(code, verifier);
    assert.equal(answer.status, 400);
    assert.equal(answer.json.error, 'invalid_grant');
  });

  test('a rotated refresh token used again revokes the grant', async () => {
    const { access, refresh } = await tokens();
    const rotated = await refreshWith(refresh);
    assert.equal(rotated.status, 200);
    const newAccess = String(rotated.json.access_token);
    const newRefresh = String(rotated.json.refresh_token);
    const replay = await refreshWith(refresh);
    assert.equal(replay.status, 400);
    assert.equal(replay.json.error, 'invalid_grant');
    for (const token of [access, newAccess]) {
      assert.equal((await http(base, '/api/v1/me', { token })).status, 401);
    }
    assert.equal((await refreshWith(newRefresh)).json.error, 'invalid_grant');
  });

  test('a refresh asking for more scopes than were granted is refused', async () => {
    const { refresh } = await tokens('games.read');
    const wider = await refreshWith(refresh, { scope: 'games.read databases.read' });
    assert.equal(wider.status, 400);
    assert.equal(wider.json.error, 'invalid_scope');
    const same = await refreshWith(refresh, { scope: 'games.read' });
    assert.equal(same.status, 200);
    assert.equal(same.json.scope, 'games.read');
  });

  test('a confidential client with a wrong secret, or none, gets nothing', async () => {
    const { code, verifier } = await codeFor();
    const wrong = await exchange(code, verifier, { clientId: web.clientId, clientSecret: 'cps_wrong' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.error, 'invalid_client');
    const none = await tokenRequest(base, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT,
      code_verifier: verifier,
      client_id: web.clientId,
    });
    assert.equal(none.status, 401);
    assert.equal(none.json.error, 'invalid_client');
    assert.equal((await exchange(code, verifier)).status, 200, 'the right secret still works');
  });

  test('deny: the app gets access_denied with its state, and no code', async () => {
    const back = await authorize(
      new FormBrowser(),
      base,
      { clientId: web.clientId, redirectUri: WEB_REDIRECT, scope: 'games.read', state: 'st', pkce: pkce() },
      'bob',
      'deny',
    );
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), 'st');
    assert.equal(back.searchParams.get('code'), null);
  });

  test('the openid scope is refused: chessport issues no ID tokens', async () => {
    for (const scope of ['openid games.read', 'openid']) {
      const page = await new FormBrowser().request(
        authorizeUrl(base, { clientId: web.clientId, redirectUri: WEB_REDIRECT, scope, pkce: pkce() }),
      );
      const location = new URL(page.headers.get('location') ?? '');
      assert.equal(location.searchParams.get('code'), null, scope);
      assert.equal(location.searchParams.get('error'), 'invalid_scope', scope);
    }
  });

  test("a form without its CSRF token, or with another browser's, changes nothing", async () => {
    const browser = new FormBrowser();
    // A scope ann has not granted: the consent page comes.
    const { page } = await browser.follow(
      authorizeUrl(base, {
        clientId: web.clientId,
        redirectUri: WEB_REDIRECT,
        scope: 'databases.read',
        pkce: pkce(),
      }),
      base,
    );
    const login = new URL(action(page.text, '/login'), base).href;
    const other = new FormBrowser();
    const otherPage = await other.request(`${base}/account/signin`);
    for (const csrf of [undefined, field(otherPage.text, 'csrf'), 'x']) {
      const form: Record<string, string> = { login: 'ann', password: PASSWORD };
      if (csrf !== undefined) form.csrf = csrf;
      const refused = await browser.request(login, { form });
      assert.equal(refused.status, 403);
      assert.match(refused.text, /expired or did not come from this site/);
      assert.equal(browser.cookie('chessport_session'), undefined, 'not signed in');
    }
    // Signed in properly, the consent form without its token gives the app nothing.
    const { page: consent } = await browser.follow(login, base, {
      form: { csrf: field(page.text, 'csrf'), login: 'ann', password: PASSWORD },
    });
    assert.match(consent.text, /name="decision"/);
    const decide = new URL(action(consent.text, '/consent'), base).href;
    const forged = await browser.request(decide, { form: { decision: 'allow' } });
    assert.equal(forged.status, 403);
    assert.equal(forged.headers.get('location'), null);
    // /account's forms too.
    const revoke = await browser.request(`${base}/account/revoke`, { form: { grant: 'x' } });
    assert.equal(revoke.status, 403);
  });

  test('the consent page names the app (escaped) and each scope in plain words', async () => {
    const browser = new FormBrowser();
    const { page } = await browser.follow(
      authorizeUrl(base, {
        clientId: web.clientId,
        redirectUri: WEB_REDIRECT,
        scope: 'user.read databases.read games.read',
        pkce: pkce(),
      }),
      base,
    );
    const { page: consent } = await browser.follow(new URL(action(page.text, '/login'), base).href, base, {
      form: { csrf: field(page.text, 'csrf'), login: 'bob', password: PASSWORD },
    });
    assert.match(consent.text, /<strong>Web &lt;App&gt;<\/strong> asks for access/);
    assert.ok(!consent.text.includes('<App>'));
    for (const words of [
      /name, e-mail address and picture/,
      /list of your game databases/,
      /Read all your games/,
    ]) {
      assert.match(consent.text, words);
    }
    assert.match(consent.text, /<html lang="en">/);
    assert.match(consent.text, /<button type="submit" name="decision" value="allow">Allow<\/button>/);
    assert.match(consent.text, /<button type="submit" name="decision" value="deny">Deny<\/button>/);
    const csp = consent.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /script-src|unsafe-inline/);
    assert.equal(consent.headers.get('cache-control'), 'no-store');
    for (const cookie of consent.headers.getSetCookie()) {
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Lax/i);
    }
  });

  test("users passwd ends the user's sessions: /account, the authorization server's and a sign-in in flight", async () => {
    const request = () => ({
      clientId: web.clientId,
      redirectUri: WEB_REDIRECT,
      scope: 'user.read',
      pkce: pkce(),
    });
    const signedIn = new FormBrowser();
    assert.ok((await authorize(signedIn, base, request(), 'pat')).searchParams.get('code'));
    assert.match((await signedIn.request(`${base}/account`)).text, /Signed in as <strong>pat<\/strong>/);
    // The authorization server's own session gives the app a code with no page at all.
    const silent = await signedIn.follow(authorizeUrl(base, request()), base);
    assert.ok(
      silent.location && new URL(silent.location).searchParams.get('code'),
      signedIn.hops.join(' -> '),
    );
    // A sign-in in flight: the password taken, the authorization request not resumed yet.
    const inFlight = new FormBrowser();
    const { page } = await inFlight.follow(authorizeUrl(base, request()), base);
    const signIn = await inFlight.request(new URL(action(page.text, '/login'), base).href, {
      form: { csrf: field(page.text, 'csrf'), login: 'pat', password: PASSWORD },
    });
    assert.equal(signIn.status, 303);
    const resume = new URL(signIn.headers.get('location') ?? '', base).href;
    const bob = new FormBrowser();
    const bobForm = await bob.request(`${base}/account/signin`);
    await bob.request(`${base}/account/signin`, {
      form: { csrf: field(bobForm.text, 'csrf'), login: 'bob', password: PASSWORD },
    });

    // The records that sign pat in: the pages' sessions, the authorization server's, the interaction.
    const signIns = async () =>
      (
        await queryStore<{ model: string }>(
          env.databaseUrl,
          "select distinct model from oauth_records where user_id = (select id from users where login = 'pat') order by model",
        )
      ).map((row) => row.model);
    assert.deepEqual(await signIns(), ['Interaction', 'Session', 'WebSession']);

    const changed = await cliInProcess(env, ['users', 'passwd', 'pat', '--stdin'], {
      stdin: 'a new password for pat\n',
    });
    assert.equal(changed.code, 0, changed.stderr);
    assert.deepEqual(await signIns(), []);

    const account = await signedIn.request(`${base}/account`);
    assert.equal(account.status, 303);
    assert.equal(account.headers.get('location'), '/account/signin');
    const again = await signedIn.follow(authorizeUrl(base, request()), base);
    assert.equal(again.location, null, `a code without signing in: ${signedIn.hops.join(' -> ')}`);
    assert.match(again.page.text, /name="password"/);
    const resumed = await inFlight.follow(resume, base);
    assert.equal(resumed.location, null, `a code from the sign-in in flight: ${inFlight.hops.join(' -> ')}`);
    // Another user's session lives on; pat signs in with the new password only.
    assert.match((await bob.request(`${base}/account`)).text, /Signed in as <strong>bob<\/strong>/);
    const fresh = new FormBrowser();
    const form = await fresh.request(`${base}/account/signin`);
    const old = await fresh.request(`${base}/account/signin`, {
      form: { csrf: field(form.text, 'csrf'), login: 'pat', password: PASSWORD },
    });
    assert.equal(old.status, 401);
    const renewed = await fresh.request(`${base}/account/signin`, {
      form: { csrf: field(form.text, 'csrf'), login: 'pat', password: 'a new password for pat' },
    });
    assert.equal(renewed.status, 303);
  });

  test('a public native client: PKCE without a secret, any loopback port, consent every time', async () => {
    const browser = new FormBrowser();
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const challenge = pkce();
    const back = await authorize(browser, base, {
      clientId: native.clientId,
      redirectUri,
      scope: 'games.read',
      pkce: challenge,
    });
    assert.equal(`${back.origin}${back.pathname}`, redirectUri);
    const answer = await tokenRequest(base, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      redirect_uri: redirectUri,
      code_verifier: challenge.verifier,
      client_id: native.clientId,
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    // Signed in already, the consent page comes again.
    const { page } = await browser.follow(
      authorizeUrl(base, { clientId: native.clientId, redirectUri, scope: 'games.read', pkce: pkce() }),
      base,
    );
    assert.match(page.text, /name="decision"/);
    // Another path on the loopback host is not registered.
    const other = await new FormBrowser().request(
      authorizeUrl(base, {
        clientId: native.clientId,
        redirectUri: 'http://127.0.0.1:49152/other',
        scope: 'games.read',
        pkce: pkce(),
      }),
    );
    assert.equal(other.status, 400);
    assert.equal(other.headers.get('location'), null);
  });

  test('revocation (RFC 7009) of a refresh token revokes the grant', async () => {
    const { access, refresh } = await tokens();
    const revoked = await tokenRequest(
      base,
      { token: refresh, token_type_hint: 'refresh_token' },
      webAuth(),
      '/oauth/revoke',
    );
    assert.equal(revoked.status, 200);
    assert.equal((await http(base, '/api/v1/me', { token: access })).status, 401);
    assert.equal((await refreshWith(refresh)).json.error, 'invalid_grant');
  });

  test('/account lists the connected app and revokes it: access and refresh tokens at once', async () => {
    const { access, refresh, browser } = await tokens();
    const page = await browser.request(`${base}/account`);
    assert.equal(page.status, 200);
    // The section of this app (ann has connected others in the tests before).
    const account = { text: page.text.slice(page.text.indexOf('>Web &lt;App&gt;</h3>')) };
    assert.ok(account.text.length < page.text.length, 'the app is listed');
    assert.match(account.text, /Read all your games/);
    // Another user's grant id is no grant of ann's.
    const bobBrowser = new FormBrowser();
    const form = await bobBrowser.request(`${base}/account/signin`);
    await bobBrowser.request(`${base}/account/signin`, {
      form: { csrf: field(form.text, 'csrf'), login: 'bob', password: PASSWORD },
    });
    const bobAccount = await bobBrowser.request(`${base}/account`);
    await bobBrowser.request(`${base}/account/revoke`, {
      form: { csrf: field(bobAccount.text, 'csrf'), grant: field(account.text, 'grant') },
    });
    assert.equal((await http(base, '/api/v1/me', { token: access })).status, 200);

    const done = await browser.request(`${base}/account/revoke`, {
      form: { csrf: field(account.text, 'csrf'), grant: field(account.text, 'grant') },
    });
    assert.equal(done.status, 303);
    assert.equal((await http(base, '/api/v1/me', { token: access })).status, 401);
    assert.equal((await refreshWith(refresh)).json.error, 'invalid_grant');
    const after = await browser.request(`${base}/account?done=revoked`);
    assert.match(after.text, /The app’s access is revoked/);
    assert.ok(!after.text.includes('Web &lt;App&gt;'), 'the app is no longer listed');
  });

  test('tokens list and tokens grants show the grants; tokens revoke takes a grant id', async () => {
    const { access } = await tokens();
    const grants = await cliJson<
      { id: string; user: string; app: string; state: string; lastUsedAt: string | null }[]
    >(env, ['tokens', 'grants', '--user', 'ann']);
    const active = grants.filter((g) => g.state === 'active' && g.app === 'Web <App>');
    assert.equal(active.length, 1);
    // Grant ids are 256 random bits, base64url, never beginning with '-', which the command would read as an
    // option: one in 64 of the OAuth library's own ids would, and the revoke below would fail on it.
    for (const { id } of grants) {
      assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
      assert.equal(Buffer.from(id, 'base64url').toString('base64url'), id, `${id}: 32 bytes, canonical`);
    }
    assert.ok(active[0]?.lastUsedAt);
    const listed = await cliJson<{ grant: string | null; state: string }[]>(env, ['tokens', 'list']);
    assert.ok(listed.some((t) => t.grant === active[0]?.id && t.state === 'active'));
    const revoked = await cliInProcess(env, ['tokens', 'revoke', active[0]?.id ?? '']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await http(base, '/api/v1/me', { token: access })).status, 401);
  });

  test('nothing secret is kept in the clear: no code, token, client secret or password', async () => {
    const { code, verifier } = await codeFor();
    const answer = await exchange(code, verifier);
    const text = await storeText(env.databaseUrl);
    for (const secret of [
      code,
      String(answer.json.access_token),
      String(answer.json.refresh_token),
      web.clientSecret ?? '',
      PASSWORD,
    ]) {
      assert.ok(!text.includes(secret), `${secret.slice(0, 6)}... is stored as it is`);
    }
  });
});

describe('OAuth: a NUL byte is an unknown value', () => {
  // PostgreSQL refuses text holding U+0000, even as a query parameter: a look-up by such an id or login
  // must answer "not found", as SQLite does, not fail with a 500 and an error in the log.
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
    server = await serveInProcess(env);
    base = server.base;
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });
  let stderr: { text(): string; stop(): void };
  beforeEach(() => {
    stderr = stderrFromNow();
  });
  afterEach(() => stderr.stop());

  const NUL = 'a\u0000b';
  const form = (path: string, params: Record<string, string>) => tokenRequest(base, params, undefined, path);

  test('client_id, login and grant with NUL get the answer of any unknown value, and no error is logged', async () => {
    const logged = server.log().length;
    const authorize = await new FormBrowser().request(
      authorizeUrl(base, { clientId: NUL, redirectUri: WEB_REDIRECT, scope: 'user.read', pkce: pkce() }),
    );
    assert.equal(authorize.status, 400);
    assert.match(authorize.text, /invalid_client|client is invalid/);

    const token = await form('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: NUL,
    });
    assert.equal(token.status, 401, JSON.stringify(token.json));
    assert.equal(token.json.error, 'invalid_client');
    const basic = await tokenRequest(
      base,
      { grant_type: 'refresh_token', refresh_token: 'x' },
      { clientId: NUL, clientSecret: 'x' },
    );
    // The provider refuses a control character in HTTP Basic credentials before any look-up.
    assert.equal(basic.status, 400, JSON.stringify(basic.json));
    assert.equal(basic.json.error, 'invalid_request');
    const deviceAuth = await form('/oauth/device/auth', { client_id: NUL, scope: 'user.read' });
    assert.equal(deviceAuth.status, 401, JSON.stringify(deviceAuth.json));
    assert.equal(deviceAuth.json.error, 'invalid_client');
    const revoke = await form('/oauth/revoke', { token: 'x', client_id: NUL });
    assert.equal(revoke.status, 401, JSON.stringify(revoke.json));

    const browser = new FormBrowser();
    const signInForm = await browser.request(`${base}/account/signin`);
    const signIn = await browser.request(`${base}/account/signin`, {
      form: { csrf: field(signInForm.text, 'csrf'), login: NUL, password: PASSWORD },
    });
    assert.equal(signIn.status, 401);
    assert.match(signIn.text, /The login or the password is wrong/);

    const again = await browser.request(`${base}/account/signin`);
    assert.equal(
      (
        await browser.request(`${base}/account/signin`, {
          form: { csrf: field(again.text, 'csrf'), login: 'ann', password: PASSWORD },
        })
      ).status,
      303,
    );
    const account = await browser.request(`${base}/account`);
    const revokeGrant = await browser.request(`${base}/account/revoke`, {
      form: { csrf: field(account.text, 'csrf'), grant: NUL },
    });
    assert.equal(revokeGrant.status, 303);
    assert.equal(revokeGrant.headers.get('location'), '/account?done=revoked');
    await assertNoErrorLogged(server, logged, stderr.text());
  });

  test('codes, tokens, user codes and uids with NUL are unknown too', async () => {
    const logged = server.log().length;
    const deviceId = { client_id: device.clientId };
    const webAuth = { clientId: web.clientId, clientSecret: web.clientSecret ?? '' };
    const answers = [
      await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: NUL, ...deviceId }),
      await form('/oauth/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: NUL,
        ...deviceId,
      }),
      await tokenRequest(
        base,
        {
          grant_type: 'authorization_code',
          code: NUL,
          redirect_uri: WEB_REDIRECT,
          code_verifier: 'v'.repeat(43),
        },
        webAuth,
      ),
      await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: NUL }, webAuth),
    ];
    for (const answer of answers) {
      assert.equal(answer.status, 400, JSON.stringify(answer.json));
      assert.equal(answer.json.error, 'invalid_grant');
    }
    assert.equal((await form('/oauth/revoke', { token: NUL, ...deviceId })).status, 200);
    const browser = new FormBrowser();
    const entry = await browser.request(`${base}/oauth/device`);
    const code = await browser.request(`${base}/oauth/device`, {
      form: { xsrf: field(entry.text, 'xsrf'), user_code: NUL },
    });
    assert.equal(code.status, 200);
    assert.match(code.text, /That code is wrong/);
    for (const path of ['/oauth/interaction/a%00b', '/oauth/authorize/a%00b', '/oauth/device/a%00b']) {
      const page = await new FormBrowser().request(`${base}${path}`);
      assert.equal(page.status, 400, path);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/, path);
    }
    await assertNoErrorLogged(server, logged, stderr.text());
  });
});

/**
 * The server wrote no error-level line and no stack trace since its log was `from` characters long, nor did
 * anything in its process print one to stderr (`stderr`: what the process wrote there meanwhile), where the
 * child process's stderr went into its log.
 */
async function assertNoErrorLogged(server: InProcessServer, from: number, stderr: string): Promise<void> {
  const log = (await settledLog(server)).slice(from) + stderr;
  assert.doesNotMatch(log, /"level":(50|60)/, log);
  assert.doesNotMatch(log, /^\s+at /m, log);
}

/** What this process writes to stderr from now until stop(); it is still written there. */
function stderrFromNow(): { text(): string; stop(): void } {
  let text = '';
  const write = process.stderr.write;
  process.stderr.write = function (this: NodeJS.WriteStream, chunk: string | Uint8Array, ...rest: unknown[]) {
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return Reflect.apply(write, this, [chunk, ...rest]);
  } as typeof process.stderr.write;
  return {
    text: () => text,
    stop: () => {
      process.stderr.write = write;
    },
  };
}

describe('OAuth: two instances on one store', () => {
  let env: Env;
  let one: InProcessServer;
  let two: InProcessServer;
  let web: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    web = await addClient(env, 'Web', ['--redirect-uri', WEB_REDIRECT]);
    // Behind one address, as behind a load balancer: both are the same issuer.
    const port = await freePort();
    const publicUrl = { PUBLIC_URL: `http://127.0.0.1:${port}` };
    one = await serveInProcess(env, publicUrl, port);
    two = await serveInProcess(env, publicUrl);
  });
  after(async () => {
    await one?.stop();
    await two?.stop();
    env?.cleanup();
  });

  test('a code issued by one is exchanged at the other; refresh and replay detection span both', async () => {
    const auth = { clientId: web.clientId, clientSecret: web.clientSecret ?? '' };
    const challenge = pkce();
    const back = await authorize(new FormBrowser(), one.base, {
      clientId: web.clientId,
      redirectUri: WEB_REDIRECT,
      scope: 'user.read',
      pkce: challenge,
    });
    const code = back.searchParams.get('code') ?? '';
    const exchanged = await tokenRequest(
      two.base,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: WEB_REDIRECT,
        code_verifier: challenge.verifier,
      },
      auth,
    );
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.json));
    const access = String(exchanged.json.access_token);
    for (const server of [one, two])
      assert.equal((await http(server.base, '/api/v1/me', { token: access })).status, 200);
    const refresh = String(exchanged.json.refresh_token);
    const rotated = await tokenRequest(
      one.base,
      { grant_type: 'refresh_token', refresh_token: refresh },
      auth,
    );
    assert.equal(rotated.status, 200);
    const replay = await tokenRequest(
      two.base,
      { grant_type: 'refresh_token', refresh_token: refresh },
      auth,
    );
    assert.equal(replay.json.error, 'invalid_grant');
    assert.equal(
      (await http(one.base, '/api/v1/me', { token: String(rotated.json.access_token) })).status,
      401,
    );
  });
});

describe('OAuth: metadata', () => {
  let env: Env;
  let server: InProcessServer;
  let behindProxy: InProcessServer;

  before(async () => {
    env = tempEnv();
    server = await serveInProcess(env);
    behindProxy = await serveInProcess(env, { PUBLIC_URL: 'https://chess.example.org' });
  });
  after(async () => {
    await server?.stop();
    await behindProxy?.stop();
    env?.cleanup();
  });

  test('an independent client library reads the server metadata (RFC 8414)', async () => {
    const issuer = new URL(server.base);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }),
    );
    assert.equal(as.issuer, server.base);
    assert.equal(as.authorization_endpoint, `${server.base}/oauth/authorize`);
    assert.equal(as.token_endpoint, `${server.base}/oauth/token`);
    assert.equal(as.revocation_endpoint, `${server.base}/oauth/revoke`);
    assert.equal(as.device_authorization_endpoint, `${server.base}/oauth/device/auth`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.response_types_supported, ['code']);
    for (const grant of [
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]) {
      assert.ok(as.grant_types_supported?.includes(grant), grant);
    }
    for (const scope of ['user.read', 'databases.read', 'games.read']) {
      assert.ok(as.scopes_supported?.includes(scope), scope);
    }
  });

  test('401s name the protected-resource metadata (RFC 9728), which names the authorization server', async () => {
    const answer = await http(server.base, '/api/v1/me');
    const metadataUrl = `${server.base}/.well-known/oauth-protected-resource`;
    assert.equal(
      answer.headers.get('www-authenticate'),
      `Bearer realm="chessport", resource_metadata="${metadataUrl}"`,
    );
    const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
    assert.deepEqual(metadata.resource, server.base);
    assert.deepEqual(metadata.authorization_servers, [server.base]);
    assert.deepEqual(metadata.scopes_supported, ['user.read', 'databases.read', 'games.read']);
    assert.deepEqual(metadata.bearer_methods_supported, ['header']);
  });

  test('with PUBLIC_URL the issuer, every endpoint and the challenges are its; cookies are Secure', async () => {
    const public_ = 'https://chess.example.org';
    const discovered = (await (
      await fetch(`${behindProxy.base}/.well-known/oauth-authorization-server`, {
        headers: { host: 'evil.example' },
      })
    ).json()) as Record<string, string>;
    assert.equal(discovered.issuer, public_);
    assert.equal(discovered.token_endpoint, `${public_}/oauth/token`);
    assert.equal(discovered.authorization_endpoint, `${public_}/oauth/authorize`);
    const answer = await http(behindProxy.base, '/api/v1/me', { token: 'cp_nope' });
    assert.match(
      answer.headers.get('www-authenticate') ?? '',
      /, resource_metadata="https:\/\/chess\.example\.org\/\.well-known\/oauth-protected-resource"$/,
    );
    const page = await fetch(`${behindProxy.base}/account/signin`);
    const cookies = page.headers.getSetCookie();
    assert.ok(cookies.length > 0);
    for (const cookie of cookies) assert.match(cookie, /^__Host-[^;]*;.*Secure/, cookie);
  });
});

describe('OAuth: Strict-Transport-Security', () => {
  let env: Env;
  let server: InProcessServer;
  let behindProxy: InProcessServer;

  before(async () => {
    env = tempEnv();
    server = await serveInProcess(env);
    behindProxy = await serveInProcess(env, { PUBLIC_URL: 'https://chess.example.org' });
  });
  after(async () => {
    await server?.stop();
    await behindProxy?.stop();
    env?.cleanup();
  });

  // The pages of the server and of oidc-provider, an error page of each, an endpoint, and /docs.
  const PATHS = [
    '/account/signin',
    '/account',
    '/oauth/device',
    '/oauth/authorize?client_id=nobody',
    '/oauth/interaction/nothing',
    '/oauth/jwks',
    '/docs',
  ];

  test('with an https PUBLIC_URL every page tells browsers to come back over https only; the API does not', async () => {
    for (const path of PATHS) {
      const answer = await fetch(`${behindProxy.base}${path}`, { redirect: 'manual' });
      await answer.arrayBuffer();
      assert.equal(answer.headers.get('strict-transport-security'), 'max-age=31536000', path);
    }
    // The API's answers go to programs (and every header of theirs is in the OpenAPI document).
    const api = await http(behindProxy.base, '/api/v1/me');
    assert.equal(api.status, 401);
    assert.equal(api.headers.get('strict-transport-security'), null);
  });

  test('over plain http (a loopback issuer) no answer carries it: a browser would ignore it anyway', async () => {
    for (const path of [...PATHS, '/api/v1/me']) {
      const answer = await fetch(`${server.base}${path}`, { redirect: 'manual' });
      await answer.arrayBuffer();
      assert.equal(answer.headers.get('strict-transport-security'), null, path);
    }
  });
});
