// `grant.revoked` (docs/webhooks.md#grantrevoked), end to end: the real server on a temp store, an OAuth app
// whose tokens come through the server's own pages and the npm `simple-oauth2` client, and real receivers
// that verify every signature with svix and standardwebhooks. Revoking one access token at /oauth/revoke
// revokes that token only (the grant, its refresh token and the app's other access go on, and no event); the
// "log out" order of simple-oauth2's revokeAll() (the access token, then the refresh token) ends the grant
// with its event; so do /account, `chessport tokens revoke <grant-id>` and a refresh token replay. The event
// carries the pairwise id /me gave the app and the time, goes only to endpoints subscribed to it, and is
// retried until delivered although the app may no longer hear of the user. The server runs in the test's
// process (serveInProcess).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuthorizationCode } from 'simple-oauth2';
import { cli, cliJson, type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  addClient,
  addUserWithPassword,
  authorize,
  type Client,
  FormBrowser,
  field,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';
import { type Receiver, startReceiver, subscribe } from '../helpers/webhook-receiver.ts';

const APP = 'Hearing App';
const REDIRECT = 'https://app.example.org/callback';
/** Generous: the machine is loaded; what is asserted is that it came, not how fast. */
const WAIT_MS = 30_000;

interface Grant {
  id: string;
  app: string;
  state: string;
}

describe('webhook events: grant.revoked', () => {
  let env: Env;
  let server: InProcessServer;
  let client: Client;
  let oauthClient: AuthorizationCode;
  /** Subscribed to every event. */
  let receiver: Receiver;
  /** Subscribed to changes.available only. */
  let changesOnly: Receiver;
  let changesOnlyId = '';

  before(async () => {
    env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s' });
    await addUserWithPassword(env, 'ann');
    client = await addClient(env, APP, ['--redirect-uri', REDIRECT]);
    receiver = await startReceiver();
    changesOnly = await startReceiver();
    await subscribe(env, APP, receiver);
    const added = await cliJson<{ id: string; secret: string }>(env, [
      'webhooks',
      'add',
      '--app',
      APP,
      '--url',
      changesOnly.url,
      '--events',
      'changes.available',
    ]);
    changesOnly.setSecrets([added.secret]);
    changesOnlyId = added.id;
    server = await serveInProcess(env);
    oauthClient = new AuthorizationCode({
      client: { id: client.clientId, secret: client.clientSecret ?? '' },
      auth: {
        tokenHost: server.base,
        tokenPath: '/oauth/token',
        revokePath: '/oauth/revoke',
        authorizePath: '/oauth/authorize',
      },
    });
  });
  after(async () => {
    await server?.stop();
    await receiver?.close();
    await changesOnly?.close();
    env?.cleanup();
  });

  /** Ann allows the app through the server's pages; simple-oauth2 exchanges the code. */
  async function connect(browser = new FormBrowser()) {
    const challenge = pkce();
    const back = await authorize(browser, server.base, {
      clientId: client.clientId,
      redirectUri: REDIRECT,
      scope: 'user.read games.read',
      pkce: challenge,
    });
    const code = back.searchParams.get('code');
    assert.ok(code, `no code in ${back}`);
    const token = await oauthClient.getToken({
      code,
      redirect_uri: REDIRECT,
      code_verifier: challenge.verifier,
    } as Parameters<AuthorizationCode['getToken']>[0]);
    const access = String(token.token.access_token);
    const me = await http<{ data: { id: string } }>(server.base, '/api/v1/me', { token: access });
    assert.equal(me.status, 200, me.text);
    return { token, access, refresh: String(token.token.refresh_token), user: me.json.data.id, browser };
  }

  const activeGrants = async () =>
    (await cliJson<Grant[]>(env, ['tokens', 'grants', '--user', 'ann'])).filter(
      (g) => g.state === 'active' && g.app === APP,
    );

  const revokedEvents = () => receiver.delivered().filter((r) => r.event.type === 'grant.revoked');

  /** Waits for the next verified grant.revoked after `seen` of them; checks it names `user` and a time. */
  async function awaitRevoked(seen: number, user: string, what: string, notBefore: number) {
    await receiver.waitFor(() => revokedEvents().length > seen, WAIT_MS, `grant.revoked after ${what}`);
    const events = revokedEvents().slice(seen);
    assert.equal(events.length, 1, `one grant.revoked after ${what}`);
    const [event] = events;
    assert.deepEqual(Object.keys(event?.event.data ?? {}).sort(), ['revokedAt', 'user']);
    assert.equal(event?.event.data.user, user, 'the pairwise id /me gave the app');
    assert.equal(event?.event.data.revokedAt, event?.event.timestamp);
    const at = Date.parse(event?.event.timestamp ?? '');
    assert.ok(
      at >= notBefore - 1000 && at <= Date.now() + 1000,
      `the revocation's time: ${event?.event.timestamp}`,
    );
  }

  /** What the endpoint subscribed to changes only was given: never a grant.revoked. */
  async function changesOnlyEvents(): Promise<string[]> {
    const deliveries = await cliJson<{ event: string }[]>(env, ['webhooks', 'deliveries', changesOnlyId]);
    return deliveries.map((d) => d.event);
  }

  test('revoking an access token at /oauth/revoke revokes that token only: the grant goes on, no event', async () => {
    const first = await connect();
    // A second access token of the same grant, from a refresh.
    const refreshed = await first.token.refresh();
    const other = String(refreshed.token.access_token);
    await first.token.revoke('access_token');
    assert.equal((await http(server.base, '/api/v1/me', { token: first.access })).status, 401);
    assert.equal((await http(server.base, '/api/v1/me', { token: other })).status, 200, 'its other token');
    assert.equal((await activeGrants()).length, 1, 'the grant is active');
    const account = await first.browser.request(`${server.base}/account`);
    assert.ok(account.text.includes(APP), 'still on /account');
    const again = await refreshed.refresh();
    assert.equal(
      (await http(server.base, '/api/v1/me', { token: String(again.token.access_token) })).status,
      200,
      'its refresh token works',
    );
    // A grant.revoked is written in the revocation's transaction: none was.
    const deliveries = await cliJson<{ event: string }[]>(env, ['webhooks', 'deliveries']);
    assert.ok(!deliveries.some((d) => d.event === 'grant.revoked'));
    // Done with it: the grant is ended for the next tests.
    const seen = revokedEvents().length;
    const since = Date.now();
    await again.revokeAll();
    await awaitRevoked(seen, first.user, 'the cleanup', since);
  });

  test("simple-oauth2's revokeAll (access, then refresh) ends the grant: gone from /account, grant.revoked arrives", async () => {
    const { token, access, refresh, user, browser } = await connect();
    const seen = revokedEvents().length;
    const since = Date.now();
    await token.revokeAll();
    assert.equal((await http(server.base, '/api/v1/me', { token: access })).status, 401);
    const refused = await tokenRequest(
      server.base,
      { grant_type: 'refresh_token', refresh_token: refresh },
      { clientId: client.clientId, clientSecret: client.clientSecret ?? '' },
    );
    assert.equal(refused.json.error, 'invalid_grant');
    assert.deepEqual(await activeGrants(), []);
    const account = await browser.request(`${server.base}/account`);
    assert.equal(account.status, 200);
    assert.ok(!account.text.includes(APP), 'no longer on /account');
    await awaitRevoked(seen, user, 'revokeAll', since);
    assert.ok(!(await changesOnlyEvents()).includes('grant.revoked'), 'not to an endpoint not subscribed');
  });

  test('revoking the app on /account sends grant.revoked', async () => {
    const { user, browser } = await connect();
    const page = await browser.request(`${server.base}/account`);
    const seen = revokedEvents().length;
    const since = Date.now();
    const done = await browser.request(`${server.base}/account/revoke`, {
      form: { csrf: field(page.text, 'csrf'), grant: field(page.text, 'grant') },
    });
    assert.equal(done.status, 303);
    await awaitRevoked(seen, user, '/account', since);
  });

  test('chessport tokens revoke <grant-id> sends grant.revoked; revoking it again sends nothing more', async () => {
    const { user } = await connect();
    const [grant] = await activeGrants();
    assert.ok(grant);
    const seen = revokedEvents().length;
    const since = Date.now();
    const revoked = await cli(env, ['tokens', 'revoke', grant.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await awaitRevoked(seen, user, 'tokens revoke', since);
    const count = (
      await cliJson<{ event: string }[]>(env, ['webhooks', 'deliveries', '--limit', '1000'])
    ).filter((d) => d.event === 'grant.revoked').length;
    assert.equal((await cli(env, ['tokens', 'revoke', grant.id])).code, 0);
    const after = (
      await cliJson<{ event: string }[]>(env, ['webhooks', 'deliveries', '--limit', '1000'])
    ).filter((d) => d.event === 'grant.revoked').length;
    assert.equal(after, count, 'a grant already revoked is not revoked again');
  });

  test('a refresh token used twice (a replay) ends the grant with grant.revoked', async () => {
    const { token, user } = await connect();
    await token.refresh();
    const seen = revokedEvents().length;
    const since = Date.now();
    await assert.rejects(token.refresh(), 'the replayed refresh token is refused');
    assert.deepEqual(await activeGrants(), []);
    await awaitRevoked(seen, user, 'a refresh replay', since);
  });

  test('grant.revoked is retried, under one message id, until the receiver takes it', async () => {
    const { token, user } = await connect();
    const first = receiver.received.length;
    receiver.answer((n) => (n < first + 2 ? 503 : 204));
    try {
      const seen = revokedEvents().length;
      const since = Date.now();
      await token.revokeAll();
      await awaitRevoked(seen, user, 'two failed attempts', since);
    } finally {
      receiver.answer(204);
    }
    const attempts = receiver.received.slice(first);
    assert.deepEqual(
      attempts.map((r) => r.status),
      [503, 503, 204],
    );
    assert.equal(new Set(attempts.map((r) => r.id)).size, 1);
  });
});
