// OAuth as a user and an app live it, in Debian's Chromium (playwright-core): the example app
// (examples/oauth-app, on oauth4webapi, an independent client library) sends the browser to chessport, the
// user signs in, reads what the app asks for and allows; the app exchanges the code with PKCE, reads /me and
// /games and refreshes; the user revokes the app on /account, and the app's next call is 401 and its refresh
// fails. Deny gives the app access_denied. The device flow: oauth4webapi as the device, the browser entering
// its code.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../helpers/chromium.ts';
import { cliJson, type Env, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import {
  addClient,
  addUserWithPassword,
  type ExampleApp,
  freePort,
  PASSWORD,
  startExampleApp,
} from '../helpers/oauth.ts';
import { ALICE_PGN } from '../helpers/world.ts';

describe('OAuth in a browser', { skip: skipWithoutChromium }, () => {
  let env: Env;
  let server: Server;
  let browser: Browser;
  let app: ExampleApp;
  let device: { clientId: string };

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    await cliJson(env, ['import', ALICE_PGN, '--user', 'ann', '--database', 'main']);
    const port = await freePort();
    const client = await addClient(env, 'Example App', [
      '--redirect-uri',
      `http://127.0.0.1:${port}/callback`,
    ]);
    device = await addClient(env, 'Chess TV', ['--device', '--public']);
    server = await startServer(env);
    app = await startExampleApp(server.base, client, port);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
    await server?.stop();
    env?.cleanup();
  });

  /** A page that records console errors (a Content-Security-Policy violation shows there). */
  async function newPage(): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      // Neither server has a favicon: the browser's own request for one is no problem of the pages.
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) {
        problems.push(`${message.text()} (${message.location().url})`);
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return { page, problems };
  }

  /** Signs in on chessport's sign-in page, by label and keyboard as a person would. */
  async function signIn(page: Page): Promise<void> {
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in');
    await page.getByLabel('Login').fill('ann');
    // Focus order: login, password, the button.
    await page.getByLabel('Login').focus();
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(() =>
        (
          globalThis as unknown as {
            document: {
              activeElement: { getAttribute(n: string): string | null; textContent: string | null } | null;
            };
          }
        ).document.activeElement?.getAttribute('name'),
      ),
      'password',
    );
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(
        () =>
          (
            globalThis as unknown as {
              document: {
                activeElement: { getAttribute(n: string): string | null; textContent: string | null } | null;
              };
            }
          ).document.activeElement?.textContent,
      ),
      'Sign in',
    );
    await page.keyboard.press('Enter');
  }

  test('sign in, allow, read, refresh; revoke on /account: 401 and no refresh', {
    timeout: 60_000,
  }, async () => {
    const { page, problems } = await newPage();
    await page.goto(app.base);
    await page.getByRole('link', { name: 'Sign in with chessport' }).click();
    await page.waitForURL(`${server.base}/oauth/interaction/**`);
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    await signIn(page);

    await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
    const consent = (await page.locator('main').textContent()) ?? '';
    assert.match(consent, /Example App asks for access/);
    assert.match(consent, /See your name, e-mail address and picture/);
    assert.match(consent, /Read all your games/);
    assert.doesNotMatch(consent, /list of your game databases/, 'databases.read was not asked for');
    await page.getByRole('button', { name: 'Allow' }).click();

    // Back at the app, which exchanged the code (with its PKCE verifier) and read /me.
    await page.waitForURL(`${app.base}/me`);
    assert.equal(await page.locator('#api-status').textContent(), '200');
    assert.equal(await page.locator('#me').textContent(), 'ann Example');
    await page.goto(`${app.base}/games`);
    assert.equal(await page.locator('#api-status').textContent(), '200');
    assert.ok((await page.locator('#games li').count()) > 0);
    await page.goto(`${app.base}/refresh`);
    assert.equal(await page.locator('#refresh').textContent(), 'refreshed');
    await page.goto(`${app.base}/games`);
    assert.equal(await page.locator('#api-status').textContent(), '200', 'the refreshed token works');

    // The user takes the access back.
    await page.goto(`${server.base}/account`);
    await page.getByRole('heading', { name: 'Example App' }).waitFor();
    assert.match((await page.locator('main').textContent()) ?? '', /Read all your games/);
    await page.getByRole('button', { name: 'Revoke access of Example App' }).click();
    await page.getByRole('status').waitFor();
    assert.match((await page.locator('main').textContent()) ?? '', /No app has access to your account/);

    await page.goto(`${app.base}/games`);
    assert.equal(await page.locator('#api-status').textContent(), '401');
    assert.equal(await page.locator('#api-error').textContent(), 'invalid_token');
    await page.goto(`${app.base}/refresh`);
    assert.equal(await page.locator('#refresh').textContent(), 'failed');
    assert.equal(await page.locator('#refresh-error').textContent(), 'invalid_grant');
    assert.deepEqual(problems, [], 'console errors');
    await page.context().close();
  });

  test('deny: the app gets access_denied', { timeout: 60_000 }, async () => {
    const { page, problems } = await newPage();
    await page.goto(`${app.base}/login`);
    await signIn(page);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${app.base}/callback**`);
    assert.equal(await page.locator('#error').textContent(), 'chessport answered: access_denied');
    assert.deepEqual(problems, [], 'console errors');
    await page.context().close();
  });

  test('the device flow: the device waits while the browser enters its code', {
    timeout: 90_000,
  }, async () => {
    const issuer = new URL(server.base);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const client: oauth.Client = { client_id: device.clientId };
    const started = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'games.read' }, insecure),
    );
    assert.match(started.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
    assert.equal(started.verification_uri, `${server.base}/oauth/device`);

    // The device polls at the interval the server gives, until the user has answered.
    const polled = (async () => {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, (started.interval ?? 5) * 1000));
        const response = await oauth.deviceCodeGrantRequest(
          as,
          client,
          oauth.None(),
          started.device_code,
          insecure,
        );
        try {
          return await oauth.processDeviceCodeResponse(as, client, response);
        } catch (error) {
          if (error instanceof oauth.ResponseBodyError && error.error === 'authorization_pending') continue;
          throw error;
        }
      }
    })();

    const { page, problems } = await newPage();
    await page.goto(started.verification_uri);
    await page.getByLabel('Code').fill(started.user_code.toLowerCase().replace('-', ''));
    await page.getByRole('button', { name: 'Continue' }).click();
    assert.match((await page.locator('main').textContent()) ?? '', /Chess TV asks to connect a device/);
    assert.equal(await page.locator('.code').textContent(), started.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();

    const tokens = await polled;
    assert.equal(tokens.token_type, 'bearer');
    assert.ok(tokens.refresh_token);
    const me = await fetch(`${server.base}/api/v1/games`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(me.status, 200);
    assert.deepEqual(problems, [], 'console errors');
    await page.context().close();
  });
});
