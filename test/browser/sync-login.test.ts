// `chessport sync --login` as a user lives it, in Debian's Chromium (playwright-core): the sync, a child
// process, prints where to sign in and the code; the browser enters the code, signs in and allows; the sync
// gets its tokens through the device flow, mirrors the account and keeps the tokens beside the mirror. A
// later run without --token or --login refreshes the expired access token and saves the new pair; a run after
// the grant was revoked (a refresh token used twice) stops with exit code 3. Deny stops the sync with exit
// code 7 and keeps nothing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../helpers/chromium.ts';
import { cli, cliJson, type Env, importPgn, type Server, spawnCli, startServer } from '../helpers/harness.ts';
import { assertSameData, mirrorData, serverData } from '../helpers/mirror-check.ts';
import { PASSWORD, syncLoginEnv, tokenRequest } from '../helpers/oauth.ts';
import { executeOnStore } from '../helpers/stores.ts';
import { devicePrompt } from '../helpers/sync-processes.ts';
import { issue, loginArgs } from '../helpers/sync-setup.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

interface SavedSignIn {
  apiBase: string;
  tokenEndpoint: string;
  clientId: string;
  tokens: { accessToken: string; refreshToken: string; expiresAt: number; scope: string };
}

describe('chessport sync --login in a browser', { skip: skipWithoutChromium }, () => {
  let env: Env;
  let server: Server;
  let browser: Browser;
  let clientId: string;

  before(async () => {
    ({ env, clientId } = await syncLoginEnv());
    await cliJson(env, ['apps', 'add', 'checker']);
    server = await startServer(env);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    env?.cleanup();
  });

  const login = (out: string, extra: string[] = []) =>
    spawnCli(env, loginArgs(server, out, ['--client-id', clientId, ...extra]));

  /** The user's part: the code, the app's name and the code checked, sign-in, and the answer. */
  async function enterCode(prompt: { uri: string; code: string }, login: string, answer: 'Allow' | 'Deny') {
    const context = await browser.newContext();
    const page: Page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(prompt.uri);
    await page.getByLabel('Code').fill(prompt.code);
    await page.getByRole('button', { name: 'Continue' }).click();
    assert.match((await page.locator('main').textContent()) ?? '', /chessport sync asks to connect a device/);
    assert.equal(await page.locator('.code').textContent(), prompt.code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Login').fill(login);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
    const consent = (await page.locator('main').textContent()) ?? '';
    assert.match(consent, /Read all your games/);
    assert.match(consent, /list of your game databases/);
    await page.getByRole('button', { name: answer }).click();
    if (answer === 'Allow') await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  }

  const savedSignIn = (out: string) =>
    JSON.parse(readFileSync(join(out, 'oauth-tokens.json'), 'utf8')) as SavedSignIn;

  test('the device flow in Chromium, then the mirror equals the server; later runs refresh the saved tokens', {
    timeout: 120_000,
  }, async () => {
    const out = join(env.dir, 'mirror-ann');
    const sync = login(out, ['--json']);
    const prompt = await devicePrompt(sync);
    assert.equal(prompt.uri, `${server.base}/oauth/device`);
    assert.match(sync.output().stderr, new RegExp(`or open ${server.base}/oauth/device\\?user_code=`));
    await enterCode(prompt, 'ann', 'Allow');
    const done = await sync.exited;
    assert.equal(done.code, 0, done.stderr);
    const summary = JSON.parse(done.stdout) as { gamesUpserted: number; resumed: boolean };
    assert.equal(summary.resumed, false);
    assert.ok(summary.gamesUpserted > 0);
    assert.match(done.stderr, /signed in; the tokens are kept in .*oauth-tokens\.json/);

    const check = await issue(env, 'ann', undefined, 'checker');
    assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, check), 'after sync --login');
    const file = join(out, 'oauth-tokens.json');
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the tokens are readable by their owner only');
    const first = savedSignIn(out);
    assert.equal(first.apiBase, `${server.base}/api/v1`);
    assert.equal(first.clientId, clientId);
    assert.equal(first.tokenEndpoint, `${server.base}/oauth/token`);
    assert.equal(first.tokens.scope, 'user.read games.read databases.read');

    // An hour later, with new games: no --token, no --login; the expired access token is refreshed.
    await importPgn(env, CLASSICS_PGN, 'ann', 'classics');
    await executeOnStore(env.databaseUrl, 'update tokens set expires_at = 1 where grant_id is not null');
    const later = await cli(env, ['sync', '--base-url', server.base, '--out', out, '--json']);
    assert.equal(later.code, 0, later.stderr);
    assert.equal((JSON.parse(later.stdout) as { resumed: boolean }).resumed, true);
    assertSameData(
      mirrorData(out),
      await serverData(`${server.base}/api/v1`, check),
      'after the refreshed run',
    );
    const second = savedSignIn(out);
    assert.notEqual(second.tokens.accessToken, first.tokens.accessToken);
    assert.notEqual(
      second.tokens.refreshToken,
      first.tokens.refreshToken,
      'the rotated refresh token is kept',
    );
    assert.equal(statSync(file).mode & 0o777, 0o600);

    // A stolen copy of the first refresh token is used: the server revokes the grant, and the sync says so.
    const replay = await tokenRequest(server.base, {
      grant_type: 'refresh_token',
      refresh_token: first.tokens.refreshToken,
      client_id: clientId,
    });
    assert.equal(replay.json.error, 'invalid_grant');
    await executeOnStore(env.databaseUrl, 'update tokens set expires_at = 1 where grant_id is not null');
    const refused = await cli(env, ['sync', '--base-url', server.base, '--out', out]);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /refused the saved sign-in's refresh token \(400 invalid_grant/);
    assert.match(refused.stderr, /Sign in again with --login/);
    assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, check), 'the mirror is kept');
  });

  test('deny: the sync stops with exit code 7 and keeps no tokens', { timeout: 120_000 }, async () => {
    const out = join(env.dir, 'mirror-bob');
    const sync = login(out);
    await enterCode(await devicePrompt(sync), 'bob', 'Deny');
    const done = await sync.exited;
    assert.equal(done.code, 7, done.stderr);
    assert.match(done.stderr, /chessport sync: the sign-in was denied \(access_denied/);
    assert.equal(existsSync(join(out, 'oauth-tokens.json')), false);
    // Nothing to reuse: a run without --login asks for a token or a sign-in.
    const again = await cli(env, ['sync', '--base-url', server.base, '--out', out]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /give a token with --token or CHESSPORT_TOKEN, or sign in with --login/);
    assert.deepEqual(await cliJson(env, ['tokens', 'grants', '--user', 'bob']), []);
  });
});
