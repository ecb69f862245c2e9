// The developer console as a new developer lives it, in Debian's Chromium (playwright-core), with no operator
// step after `users add` and `users passwd`: sign in at /developers, register a confidential app, add a
// webhook endpoint on a local receiver (svix verifies each delivery), Send test event and see it delivered;
// then another user goes through the code flow of the example app (oauth4webapi) with the new client id,
// /me is 200, a change of theirs is delivered, they revoke the app on /account, and the receiver gets a
// verified grant.revoked with the same pairwise id as /me. Personal access tokens made in the browser: exactly
// their scopes, expiry, revoke, last used. axe-core checks every page: no serious or critical violation.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../helpers/chromium.ts';
import { cliJson, type Env, http, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import {
  addUserWithPassword,
  cliWithInput,
  type ExampleApp,
  freePort,
  PASSWORD,
  startExampleApp,
  tokenRequest,
} from '../helpers/oauth.ts';
import { executeOnStore } from '../helpers/stores.ts';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.ts';
import { ALICE_PGN } from '../helpers/world.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

/** The page's serious and critical accessibility violations, by axe-core run in the page. */
async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a script tag would be refused).
  await page.evaluate(`${AXE_SOURCE}\nundefined`);
  const violations = (await page.evaluate(
    '(async () => (await axe.run(document, { resultTypes: ["violations"] })).violations)()',
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${page.url()}: ${v.id} (${v.impact}) ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`,
    );
}

describe('the developer console in a browser', { skip: skipWithoutChromium }, () => {
  let env: Env;
  let server: Server;
  let browser: Browser;
  let receiver: Receiver;
  let example: ExampleApp | undefined;
  let client: { clientId: string; clientSecret: string } | undefined;
  const accessibility: string[] = [];

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'dev');
    // Bob has no display name: the example app then shows his /me id, the pairwise one.
    await cliJson(env, ['users', 'add', 'bob']);
    const set = await cliWithInput(env, ['users', 'passwd', 'bob', '--stdin'], `${PASSWORD}\n`);
    assert.equal(set.code, 0, set.stderr);
    server = await startServer(env, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '50' });
    receiver = await startReceiver();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await example?.stop();
    await receiver?.close();
    await server?.stop();
    env?.cleanup();
  });

  async function newPage(): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) {
        problems.push(`${message.text()} (${message.location().url})`);
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return { page, problems };
  }

  /** Checks the page with axe, and that nothing is wider than the 375 px viewport. */
  async function check(page: Page): Promise<void> {
    accessibility.push(...(await axeProblems(page)));
    const wide = await page.evaluate('document.documentElement.scrollWidth');
    assert.ok(Number(wide) <= 375, `${page.url()} is ${wide} px wide at 375 px`);
  }

  async function signIn(page: Page, login: string): Promise<void> {
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await check(page);
    await page.getByLabel('Login').fill(login);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  const testid = async (page: Page, id: string) => ((await page.getByTestId(id).textContent()) ?? '').trim();

  test('a new developer: app, endpoint, test event; a user allows, changes, revokes', {
    timeout: 3120_000,
  }, async () => {
    const { page, problems } = await newPage();
    await page.goto(`${server.base}/developers`);
    await signIn(page, 'dev');
    await page.waitForURL(`${server.base}/developers`);
    await check(page);
    await page.getByRole('link', { name: 'Register an app' }).first().click();
    await page.waitForURL(`${server.base}/developers/apps/new`);
    await check(page);
    const port = await freePort();
    await page.locator('[name="name"]').fill('Dev App');
    await page.locator('[name="redirect_uri"]').fill(`http://127.0.0.1:${port}/callback`);
    await page.locator('[name="kind"][value="confidential"]').check();
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByTestId('client-id').waitFor();
    await check(page);
    client = { clientId: await testid(page, 'client-id'), clientSecret: await testid(page, 'client-secret') };
    assert.match(client.clientSecret, /^cps_/);

    await page.locator('[name="url"]').fill(receiver.url);
    await page.getByRole('button', { name: 'Add the endpoint' }).click();
    await page.getByTestId('webhook-secret').waitFor();
    receiver.setSecrets([await testid(page, 'webhook-secret')]);
    await check(page);
    await page.getByTestId('send-test-event').click();
    await receiver.waitFor(
      (r) => r.some((x) => x.event.type === 'ping' && x.verifiedWith.length === 1 && x.status === 204),
      120_000,
      'a verified ping',
    );
    const endpointUrl = page.url().replace(/\/test$/, '');
    const deadline = Date.now() + 120_000;
    for (;;) {
      await page.goto(endpointUrl);
      if ((await page.locator('td', { hasText: /^delivered$/ }).count()) > 0 || Date.now() > deadline) break;
      await page.waitForTimeout(100);
    }
    assert.equal(await page.locator('tbody tr td').nth(1).textContent(), 'ping');
    assert.equal(await page.locator('tbody tr td').nth(2).textContent(), 'delivered');
    await page.getByTestId('redeliver').first().waitFor();
    await check(page);
    assert.deepEqual(problems, [], 'console errors');

    // Bob uses the app: the code flow with the new client id and secret.
    example = await startExampleApp(server.base, client, port);
    const bob = await newPage();
    await bob.page.goto(example.base);
    await bob.page.getByRole('link', { name: 'Sign in with chessport' }).click();
    await signIn(bob.page, 'bob');
    await bob.page.getByRole('heading', { name: 'Allow access?' }).waitFor();
    await check(bob.page);
    assert.match((await bob.page.locator('main').textContent()) ?? '', /Dev App asks for access/);
    await bob.page.getByRole('button', { name: 'Allow' }).click();
    await bob.page.waitForURL(`${example.base}/me`);
    assert.equal(await bob.page.locator('#api-status').textContent(), '200');
    const pairwise = ((await bob.page.locator('#me').textContent()) ?? '').trim();
    assert.match(pairwise, /^[0-9a-f-]{36}$/);

    // A change of bob's is delivered to the app's endpoint, for his pairwise id.
    await cliJson(env, ['import', ALICE_PGN, '--user', 'bob', '--database', 'main']);
    await receiver.waitFor(
      (r) => r.some((x) => x.event.type === 'changes.available' && x.event.data.user === pairwise),
      120_000,
      "bob's change",
    );

    // Bob lets the app go on /account: the app hears it, signed, with the same id.
    await bob.page.goto(`${server.base}/account`);
    await bob.page.getByRole('heading', { name: 'Dev App' }).waitFor();
    assert.doesNotMatch((await bob.page.locator('main').textContent()) ?? '', /Last used the API: never/);
    await check(bob.page);
    await bob.page.getByRole('button', { name: 'Revoke access of Dev App' }).click();
    await bob.page.getByRole('status').waitFor();
    await receiver.waitFor(
      (r) => r.some((x) => x.event.type === 'grant.revoked' && x.verifiedWith.length === 1),
      120_000,
      'a verified grant.revoked',
    );
    const revoked = receiver.received.find((x) => x.event.type === 'grant.revoked');
    assert.equal(revoked?.event.data.user, pairwise);
    assert.deepEqual(bob.problems, [], 'console errors');
    await bob.page.context().close();
    await page.context().close();
  });

  test('personal access tokens: made in the browser, exactly their scopes, last used, expiry, revoke', {
    timeout: 300_000,
  }, async () => {
    const { page, problems } = await newPage();
    await page.goto(`${server.base}/account/tokens`);
    await signIn(page, 'dev');
    await page.waitForURL(`${server.base}/account/tokens`);
    await check(page);
    const make = async (description: string, scopes: string[]) => {
      await page.goto(`${server.base}/account/tokens/new`);
      await check(page);
      await page.locator('[name="description"]').fill(description);
      for (const scope of scopes) await page.locator(`[name="scope"][value="${scope}"]`).check();
      await page.locator('[name="expires_in_days"]').fill('30');
      await page.getByRole('button', { name: 'Make the token' }).click();
      await page.getByTestId('personal-token').waitFor();
      await check(page);
      return testid(page, 'personal-token');
    };
    const token = await make('my script', ['user.read']);
    const other = await make('another script', ['user.read', 'games.read']);

    const api = `${server.base}/api/v1`;
    const me = await http<{ data: { id: string } }>(api, '/me', { token });
    assert.equal(me.status, 200);
    assert.equal((await http(api, '/databases', { token })).status, 403, 'outside its scopes');
    assert.equal((await http(api, '/games', { token })).status, 403, 'outside its scopes');
    const otherMe = await http<{ data: { id: string } }>(api, '/me', { token: other });
    assert.equal(otherMe.json.data.id, me.json.data.id, 'one pairwise id for all personal tokens');
    assert.equal((await http(api, '/games', { token: other })).status, 200);

    // Shown with their last use.
    await page.goto(`${server.base}/account/tokens`);
    const row = page.locator('tr', { hasText: 'my script' });
    assert.doesNotMatch((await row.textContent()) ?? '', /never$/m);
    assert.equal(await row.locator('td').nth(1).textContent(), 'user.read');

    // The OAuth endpoints know none of them: revoking one there leaves it working.
    assert.ok(client, 'the app of the first test');
    const revokedThere = await tokenRequest(server.base, { token }, client, '/oauth/revoke');
    assert.equal(revokedThere.status, 200, 'RFC 7009: an unknown token is no error');
    assert.equal((await http(api, '/me', { token })).status, 200, 'and the personal token still works');
    const asClient = await tokenRequest(
      server.base,
      { grant_type: 'refresh_token', refresh_token: token },
      client,
    );
    assert.equal(asClient.status, 400, 'nor is it a refresh token');

    // Revoked on the page: 401.
    await page.getByRole('button', { name: 'Revoke my script' }).click();
    await page.getByRole('status').waitFor();
    assert.equal((await http(api, '/me', { token })).status, 401);
    assert.equal(await page.locator('tr', { hasText: 'my script' }).count(), 0);

    // Expired: 401, and listed as expired.
    await executeOnStore(
      env.databaseUrl,
      `update tokens set expires_at = 1000 where description = 'another script'`,
    );
    const expired = await http(api, '/me', { token: other });
    assert.equal(expired.status, 401);
    assert.match(expired.headers.get('www-authenticate') ?? '', /expired/);
    await page.reload();
    assert.match((await page.locator('tr', { hasText: 'another script' }).textContent()) ?? '', /expired/);
    await check(page);

    // The account page, too.
    await page.goto(`${server.base}/account`);
    await check(page);
    assert.deepEqual(problems, [], 'console errors');
    await page.context().close();
    assert.deepEqual(accessibility, [], 'no serious or critical accessibility violation');
  });
});
