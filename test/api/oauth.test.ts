// The OAuth authorization server against a real server on a real store, set up through the CLI: the code
// flow with PKCE through the server's own pages, tokens that the API takes as any other, refresh with
// rotation, revocation, and each refusal a hostile client or page might try.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliJson, type Env, http, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import {
  addClient,
  addUserWithPassword,
  authorize,
  type Client,
  FormBrowser,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';
import { ALICE_PGN } from '../helpers/world.ts';

const WEB_REDIRECT = 'https://app.example.org/callback';

describe('OAuth: the authorization code flow with PKCE', () => {
  let env: Env;
  let server: Server;
  let base: string;
  let web: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    await cliJson(env, ['import', ALICE_PGN, '--user', 'ann', '--database', 'main']);
    web = await addClient(env, 'Web <App>', ['--redirect-uri', WEB_REDIRECT]);
    server = await startServer(env);
    base = server.base;
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  const webAuth = () => ({ clientId: web.clientId, clientSecret: web.clientSecret ?? '' });

  async function codeFor(scope = 'user.read games.read') {
    const browser = new FormBrowser();
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

    const refreshed = await tokenRequest(base, { grant_type: 'refresh_token', refresh_token: refresh }, webAuth());
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    assert.notEqual(refreshed.json.refresh_token, refresh);
    assert.equal((await http(base, '/api/v1/me', { token: String(refreshed.json.access_token) })).status, 200);
  });
});
