// The client with OAuth tokens against a real server and real grants (the code flow through the server's own
// pages, the device flow): an access token the API refuses is refreshed once and the call repeated, the new
// pair saved before it is used; concurrent refusals share one refresh; a refresh token that was used twice
// (the grant revoked) fails the call with invalid_grant, and later calls send no refresh; the device flow's
// answers (allowed, denied); the metadata is checked before a token goes anywhere. The server runs in the
// test's process (serveInProcess).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  ChessportClient,
  ChessportError,
  ChessportOAuthError,
  discoverAuthorizationServer,
  OAuthTokens,
  startDeviceAuthorization,
  type TokenSet,
  type TokenSource,
} from '../../packages/client/src/index.ts';
import { cliJson, type Env, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  addClient,
  addUserWithPassword,
  authorize,
  type Client,
  enterDeviceCode,
  FormBrowser,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';
import { executeOnStore } from '../helpers/stores.ts';
import { ALICE_PGN } from '../helpers/world.ts';

const REDIRECT = 'https://app.example.org/callback';
const SCOPE = 'user.read games.read databases.read';

/** What the call threw; it must throw. */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('the call succeeded');
}

describe('the client with OAuth tokens', () => {
  let env: Env;
  let server: InProcessServer;
  let base: string;
  let web: Client;
  let device: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    await addUserWithPassword(env, 'bob');
    await cliJson(env, ['import', ALICE_PGN, '--user', 'ann', '--database', 'main']);
    await cliJson(env, ['apps', 'add', 'own-source']);
    web = await addClient(env, 'Web App', ['--redirect-uri', REDIRECT]);
    device = await addClient(env, 'Chess CLI', ['--device', '--public']);
    server = await serveInProcess(env);
    base = server.base;
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  /** A grant of the web app through sign-in and consent, and its first tokens as a TokenSet. */
  async function granted(): Promise<TokenSet> {
    const challenge = pkce();
    const back = await authorize(new FormBrowser(), base, {
      clientId: web.clientId,
      redirectUri: REDIRECT,
      scope: SCOPE,
      pkce: challenge,
    });
    const code = back.searchParams.get('code');
    assert.ok(code, `no code in ${back}`);
    const answer = await tokenRequest(
      base,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: challenge.verifier },
      { clientId: web.clientId, clientSecret: web.clientSecret ?? '' },
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    return {
      accessToken: String(answer.json.access_token),
      refreshToken: String(answer.json.refresh_token),
      expiresAt: Date.now() + Number(answer.json.expires_in) * 1000,
      scope: String(answer.json.scope),
    };
  }

  /** As if every OAuth access token's hour had passed: the API refuses them as expired. */
  const expireAccessTokens = () =>
    executeOnStore(env.databaseUrl, 'update tokens set expires_at = 1 where grant_id is not null');

  /** fetch that writes each request and its answer's status into `log`. */
  function loggingFetch(log: string[]): typeof fetch {
    return async (input, init) => {
      const url = new URL(String(input));
      const response = await fetch(input, init);
      log.push(`${init?.method ?? 'GET'} ${url.pathname} ${response.status}`);
      return response;
    };
  }

  function webTokens(tokens: TokenSet, log: string[], saved: TokenSet[]) {
    return new OAuthTokens({
      issuer: base,
      clientId: web.clientId,
      clientSecret: web.clientSecret ?? undefined,
      tokens,
      fetch: loggingFetch(log),
      onTokens: async (pair) => {
        // Saving takes a moment: the call must wait for it.
        await new Promise((resolve) => setTimeout(resolve, 50));
        saved.push(pair);
        log.push('saved');
      },
    });
  }

  test('an expired access token is refreshed once, the new pair saved before the call is repeated', async () => {
    const first = await granted();
    const log: string[] = [];
    const saved: TokenSet[] = [];
    const source = webTokens(first, log, saved);
    const api = new ChessportClient({ baseUrl: base, token: source, fetch: loggingFetch(log) });
    assert.equal((await api.me()).name, 'ann Example');
    assert.deepEqual(log, ['GET /api/v1/me 200']);

    await expireAccessTokens();
    log.length = 0;
    assert.equal((await api.me()).name, 'ann Example');
    assert.deepEqual(log, [
      'GET /api/v1/me 401',
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/token 200',
      'saved',
      'GET /api/v1/me 200',
    ]);
    assert.equal(saved.length, 1);
    const [pair] = saved as [TokenSet];
    assert.notEqual(pair.accessToken, first.accessToken);
    assert.notEqual(pair.refreshToken, first.refreshToken, 'the refresh token rotates');
    assert.equal(pair.scope, SCOPE);
    assert.ok(pair.expiresAt !== null && pair.expiresAt > Date.now() + 3_000_000, 'an hour ahead');
    assert.deepEqual(source.tokens, pair);

    // The next call uses the new token; the metadata is not read again.
    log.length = 0;
    await api.databases();
    assert.deepEqual(log, ['GET /api/v1/databases 200']);
  });

  test('concurrent calls refused at once share one refresh', async () => {
    const log: string[] = [];
    const saved: TokenSet[] = [];
    const first = await granted();
    const source = webTokens(first, log, saved);
    const api = new ChessportClient({ baseUrl: base, token: source, fetch: loggingFetch(log) });
    await api.me();
    await expireAccessTokens();
    log.length = 0;
    const results = await Promise.all([
      api.me(),
      api.databases(),
      api.games(),
      api.changes({ limit: 5 }),
      api.me(),
      api.games({ limit: 3 }),
    ]);
    assert.equal(results.length, 6);
    assert.equal(log.filter((line) => line.startsWith('POST /oauth/token')).length, 1, log.join('\n'));
    assert.equal(log.filter((line) => line.endsWith(' 401')).length, 6, log.join('\n'));
    assert.equal(saved.length, 1);
    // A call refused with the old token after the refresh has ended takes the new one without refreshing.
    log.length = 0;
    assert.equal(await source.refresh(first.accessToken), saved[0]?.accessToken);
    assert.deepEqual(log, []);
  });

  test('a reused refresh token revokes the grant: the call fails with invalid_grant, later ones send no refresh', async () => {
    const first = await granted();
    const log: string[] = [];
    const saved: TokenSet[] = [];
    const source = webTokens(first, log, saved);
    const api = new ChessportClient({ baseUrl: base, token: source, fetch: loggingFetch(log) });
    await expireAccessTokens();
    await api.me();
    assert.equal(saved.length, 1);
    // A stolen copy of the first refresh token is used: the server revokes the grant.
    const replay = await tokenRequest(
      base,
      { grant_type: 'refresh_token', refresh_token: String(first.refreshToken) },
      { clientId: web.clientId, clientSecret: web.clientSecret ?? '' },
    );
    assert.equal(replay.json.error, 'invalid_grant');

    log.length = 0;
    const error = await thrown(api.me());
    assert.ok(error instanceof ChessportOAuthError, String(error));
    assert.equal(error.error, 'invalid_grant');
    assert.equal(error.status, 400);
    assert.equal(error.endpoint, `${base}/oauth/token`);
    assert.deepEqual(log, ['GET /api/v1/me 401', 'POST /oauth/token 400']);
    assert.equal(saved.length, 1, 'nothing new to save');

    log.length = 0;
    const again = await thrown(api.databases());
    assert.equal(again, error, 'the same refusal');
    assert.deepEqual(log, ['GET /api/v1/databases 401'], 'no refresh is sent again');
  });

  test('a token that expires within seconds is refreshed before it is sent', async () => {
    const tokens = { ...(await granted()), expiresAt: Date.now() + 5_000 };
    const log: string[] = [];
    const saved: TokenSet[] = [];
    const api = new ChessportClient({
      baseUrl: base,
      token: webTokens(tokens, log, saved),
      fetch: loggingFetch(log),
    });
    await api.me();
    assert.deepEqual(log, [
      'GET /.well-known/oauth-authorization-server 200',
      'POST /oauth/token 200',
      'saved',
      'GET /api/v1/me 200',
    ]);
  });

  test('a token source of its own: refreshed once per call, the call repeated once', async () => {
    const good = await issueToken(env, 'ann', 'own-source', 'user.read');
    const rejected: string[] = [];
    let current = 'cp_not_a_token';
    const source: TokenSource = {
      accessToken: () => current,
      refresh: async (token) => {
        rejected.push(token);
        current = good;
        return current;
      },
    };
    const api = new ChessportClient({ baseUrl: base, token: source });
    assert.equal((await api.me()).name, 'ann Example');
    assert.deepEqual(rejected, ['cp_not_a_token']);

    // A source whose new token is refused too: the 401 is thrown after one refresh.
    const calls: string[] = [];
    const hopeless = new ChessportClient({
      baseUrl: base,
      token: {
        accessToken: () => 'cp_wrong_1',
        refresh: async (token) => {
          calls.push(token);
          return 'cp_wrong_2';
        },
      },
    });
    const error = await thrown(hopeless.me());
    assert.ok(error instanceof ChessportError);
    assert.equal(error.status, 401);
    assert.equal(error.error, 'invalid_token');
    assert.deepEqual(calls, ['cp_wrong_1']);

    // 403 is no reason to refresh.
    calls.length = 0;
    const scoped = new ChessportClient({
      baseUrl: base,
      token: {
        accessToken: () => good,
        refresh: async () => {
          calls.push('refresh');
          return good;
        },
      },
    });
    assert.equal(((await thrown(scoped.games())) as ChessportError).status, 403);
    assert.deepEqual(calls, []);
  });

  test('a bad token source is a TypeError', async () => {
    assert.throws(
      () => new ChessportClient({ baseUrl: base, token: {} as TokenSource }),
      /accessToken\(\) method/,
    );
    const api = new ChessportClient({ baseUrl: base, token: { accessToken: () => 'two words' } });
    const error = await thrown(api.me());
    assert.ok(error instanceof TypeError);
    assert.doesNotMatch(error.message, /two words/, 'the token is not quoted');
  });

  test('the device flow: the user allows it, and its tokens refresh as a public client', {
    timeout: 60_000,
  }, async () => {
    const started = await startDeviceAuthorization({ issuer: base, clientId: device.clientId, scope: SCOPE });
    assert.match(started.userCode, /^[B-DF-HJ-NP-TV-Z]{4}-[B-DF-HJ-NP-TV-Z]{4}$/);
    assert.equal(started.verificationUri, `${base}/oauth/device`);
    assert.ok(started.verificationUriComplete?.startsWith(`${base}/oauth/device?user_code=`));
    assert.equal(started.tokenEndpoint, `${base}/oauth/token`);
    const waits: string[] = [];
    const polled = started.tokens({ onWait: (ms, reason) => waits.push(`${reason} ${ms}`) });
    const done = await enterDeviceCode(new FormBrowser(), base, started.userCode);
    assert.match(done.text, /Device connected/);
    const tokens = await polled;
    assert.equal(waits[0], 'pending 5000', 'RFC 8628: 5 s when the server names no interval');
    assert.ok(tokens.refreshToken);
    assert.equal(tokens.scope, SCOPE);

    const saved: TokenSet[] = [];
    const api = new ChessportClient({
      baseUrl: base,
      token: new OAuthTokens({
        tokenEndpoint: started.tokenEndpoint,
        clientId: device.clientId,
        tokens,
        onTokens: (pair) => {
          saved.push(pair);
        },
      }),
    });
    await expireAccessTokens();
    assert.equal((await api.me()).name, 'ann Example');
    assert.equal(saved.length, 1);
  });

  test('the device flow: the user denies it', { timeout: 60_000 }, async () => {
    const started = await startDeviceAuthorization({
      issuer: base,
      clientId: device.clientId,
      scope: ['games.read'],
    });
    const polled = thrown(started.tokens());
    // bob, who has not allowed the app before: ann's grant would let the code through without asking.
    await enterDeviceCode(new FormBrowser(), base, started.userCode, 'bob', 'deny');
    const error = await polled;
    assert.ok(error instanceof ChessportOAuthError, String(error));
    assert.equal(error.error, 'access_denied');
  });

  test('a client that is not a device app is refused at once', async () => {
    const error = await thrown(
      startDeviceAuthorization({ issuer: base, clientId: web.clientId, scope: SCOPE }),
    );
    assert.ok(error instanceof ChessportOAuthError, String(error));
    assert.match(error.error, /^(invalid_client|unauthorized_client)$/);
  });

  test('metadata that names another issuer is refused before any token is sent', async () => {
    const requests: string[] = [];
    const impostor = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({ issuer: 'https://chess.example.org', token_endpoint: `${base}/oauth/token` }),
      );
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
    try {
      const error = await thrown(discoverAuthorizationServer(address));
      assert.ok(error instanceof ChessportOAuthError);
      assert.equal(error.error, 'unexpected_response');
      assert.match(error.message, /names the issuer "https:\/\/chess.example.org"/);

      const source = new OAuthTokens({
        issuer: address,
        clientId: 'x',
        tokens: { accessToken: 'a', refreshToken: 'r', expiresAt: null, scope: null },
      });
      assert.equal(((await thrown(source.refresh('a'))) as ChessportOAuthError).error, 'unexpected_response');
      assert.deepEqual(requests, [
        'GET /.well-known/oauth-authorization-server',
        'GET /.well-known/oauth-authorization-server',
      ]);
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
    // The server's own metadata, for comparison.
    const metadata = await discoverAuthorizationServer(`${base}/api/v1/`);
    assert.equal(metadata.issuer, base);
    assert.equal(metadata.device_authorization_endpoint, `${base}/oauth/device/auth`);
  });
});
