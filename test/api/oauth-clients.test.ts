// What client libraries and browsers see of the authorization server (docs/oauth.md): metadata (RFC 8414)
// without OpenID Connect's leftovers, read by openid-client (v6, its oauth2 discovery), which then walks the
// code flow with PKCE through the server's own pages; the token endpoint's CORS for a public client on a
// loopback redirect URI from any port of its address; and the device page's Content-Security-Policy, exactly
// the one docs/oauth.md states.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { type Env, http, ROOT, tempEnv } from '../helpers/harness.ts';
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
  PASSWORD,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';

const WEB_REDIRECT = 'https://app.example.org/callback';

describe('OAuth: what client libraries and browsers see', () => {
  let env: Env;
  let server: InProcessServer;
  let web: Client;
  let v4: Client;
  let v6: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    web = await addClient(env, 'Web', ['--redirect-uri', WEB_REDIRECT]);
    v4 = await addClient(env, 'Loopback v4', ['--redirect-uri', 'http://127.0.0.1/callback', '--public']);
    v6 = await addClient(env, 'Loopback v6', ['--redirect-uri', 'http://[::1]/callback', '--public']);
    server = await serveInProcess(env);
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('the metadata says nothing of OpenID Connect: no subject types, no ID token algorithms, no openid scope', async () => {
    const answer = await fetch(`${server.base}/.well-known/oauth-authorization-server`);
    assert.equal(answer.status, 200);
    const metadata = (await answer.json()) as Record<string, unknown>;
    for (const key of [
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
      'claims_supported',
      'claim_types_supported',
      'claims_parameter_supported',
      'request_uri_parameter_supported',
    ]) {
      assert.ok(!(key in metadata), key);
    }
    assert.deepEqual(metadata.scopes_supported, ['user.read', 'databases.read', 'games.read']);
    assert.equal((await fetch(`${server.base}/.well-known/openid-configuration`)).status, 404);
  });

  test('openid-client v6 discovers the server (oauth2) and gets tokens through the code flow with PKCE', async () => {
    const config = await client.discovery(
      new URL(server.base),
      web.clientId,
      undefined,
      client.ClientSecretBasic(web.clientSecret ?? ''),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    const metadata = config.serverMetadata();
    assert.equal(metadata.issuer, server.base);
    assert.equal(metadata.token_endpoint, `${server.base}/oauth/token`);
    assert.equal(metadata.revocation_endpoint, `${server.base}/oauth/revoke`);
    const challenge = pkce();
    const state = client.randomState();
    const built = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB_REDIRECT,
      scope: 'user.read games.read',
      code_challenge: challenge.challenge,
      code_challenge_method: 'S256',
      state,
    });
    assert.equal(`${built.origin}${built.pathname}`, `${server.base}/oauth/authorize`);
    const back = await authorize(new FormBrowser(), server.base, {
      clientId: web.clientId,
      redirectUri: WEB_REDIRECT,
      scope: 'user.read games.read',
      state,
      pkce: challenge,
    });
    const tokens = await client.authorizationCodeGrant(config, back, {
      pkceCodeVerifier: challenge.verifier,
      expectedState: state,
    });
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.id_token, undefined, 'no ID token');
    assert.equal((await http(server.base, '/api/v1/me', { token: tokens.access_token })).status, 200);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '');
    assert.equal((await http(server.base, '/api/v1/me', { token: refreshed.access_token })).status, 200);
  });

  test('a public client on a loopback redirect URI may call the token endpoint from any port of its address', async () => {
    for (const [app, host] of [
      [v4, '127.0.0.1'],
      [v6, '[::1]'],
    ] as const) {
      for (const port of [49152, 8080, 65535]) {
        const origin = `http://${host}:${port}`;
        const answer = await fetch(`${server.base}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: 'not-a-code',
            redirect_uri: `http://${host}:${port}/callback`,
            code_verifier: pkce().verifier,
            client_id: app.clientId,
          }),
        });
        // The code is made up: what is asserted is that the browser may read the answer.
        assert.equal(answer.headers.get('access-control-allow-origin'), origin, origin);
        assert.equal(((await answer.json()) as { error: string }).error, 'invalid_grant');
      }
      // Another address, another scheme, a name: not the app's page.
      const others =
        host === '127.0.0.1'
          ? ['http://127.0.0.2:8080', 'https://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080']
          : ['http://127.0.0.1:8080', 'https://[::1]:8080', 'http://localhost:8080'];
      for (const origin of others) {
        const answer = await fetch(`${server.base}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: 'x',
            client_id: app.clientId,
          }),
        });
        assert.equal(answer.headers.get('access-control-allow-origin'), null, `${origin} for ${host}`);
        assert.notEqual(answer.status, 200);
      }
    }
    // A confidential client's page never calls the token endpoint from a browser.
    const confidential = await tokenRequest(
      server.base,
      { grant_type: 'refresh_token', refresh_token: 'x' },
      { clientId: web.clientId, clientSecret: web.clientSecret ?? '' },
    );
    assert.notEqual(confidential.status, 200);
  });

  test("the device page's Content-Security-Policy is exactly the one docs/oauth.md states", async () => {
    const docs = readFileSync(join(ROOT, 'docs/oauth.md'), 'utf8');
    const stated = /Pages send `Content-Security-Policy: ([^`]+)`/.exec(docs)?.[1]?.replace(/\s+/g, ' ');
    assert.ok(stated, "docs/oauth.md states the pages' policy");
    for (const path of ['/oauth/device', '/account/signin']) {
      const answer = await fetch(`${server.base}${path}`);
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers.get('content-security-policy'), stated, path);
    }
    assert.doesNotMatch(stated, /script-src/, 'no script at all');
  });

  test("the authorization endpoint's form_post answer may run its one script, by its hash, and no other", async () => {
    const docs = readFileSync(join(ROOT, 'docs/oauth.md'), 'utf8');
    const stated =
      /Pages send `Content-Security-Policy: ([^`]+)`/.exec(docs)?.[1]?.replace(/\s+/g, ' ') ?? '';
    const browser = new FormBrowser();
    let { page } = await browser.follow(
      authorizeUrl(server.base, {
        clientId: web.clientId,
        redirectUri: WEB_REDIRECT,
        scope: 'games.read',
        pkce: pkce(),
        extra: { response_mode: 'form_post' },
      }),
      server.base,
    );
    for (let step = 0; step < 4 && !page.text.includes('<script>'); step++) {
      const form: { path: string; fields: Record<string, string> } = page.text.includes('name="password"')
        ? { path: '/login', fields: { login: 'ann', password: PASSWORD } }
        : { path: '/consent', fields: { decision: 'allow' } };
      ({ page } = await browser.follow(new URL(action(page.text, form.path), server.base).href, server.base, {
        form: { csrf: field(page.text, 'csrf'), ...form.fields },
      }));
    }
    const script = /<script>([\s\S]*?)<\/script>/.exec(page.text)?.[1];
    assert.ok(script !== undefined, `the form_post page:\n${page.text}`);
    assert.match(page.text, new RegExp(`action="${WEB_REDIRECT}"`));
    const hash = createHash('sha256').update(script).digest('base64');
    const csp = (page.headers.get('content-security-policy') ?? '').replace(/;\s*/g, '; ');
    assert.equal(csp, `${stated}; script-src 'sha256-${hash}'`);
  });
});
