// The device flow's code entry (RFC 8628 section 5.1) against a real server: wrong user codes are counted per
// client address, and past the limit the page refuses every code, the right one too, with a 429 and a
// Retry-After, while another address enters codes as before; a signed-in user's wrong codes also count
// against the account, whatever the address. The server trusts X-Forwarded-For from loopback (TRUST_PROXY),
// so each browser of the test stands at an address of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  addClient,
  addUserWithPassword,
  type Client,
  FormBrowser,
  field,
  PASSWORD,
  tokenRequest,
} from '../helpers/oauth.ts';

/** Letters no user code has (its charset is base-20: no vowels, nor Y), so the code is wrong. */
const WRONG_CODE = 'AAAA-AAAA';

describe('OAuth: the device code entry is throttled', () => {
  let env: Env;
  let server: InProcessServer;
  let device: Client;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    device = await addClient(env, 'Chess CLI', ['--device', '--public']);
    server = await serveInProcess(env, { TRUST_PROXY: 'loopback' });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  async function startDevice(): Promise<string> {
    const started = await tokenRequest(
      server.base,
      { client_id: device.clientId, scope: 'user.read' },
      undefined,
      '/oauth/device/auth',
    );
    assert.equal(started.status, 200, JSON.stringify(started.json));
    return String(started.json.user_code);
  }

  /** Enters a code on /oauth/device from the browser's address: the page that answers. */
  async function enter(browser: FormBrowser, userCode: string) {
    const entry = await browser.request(`${server.base}/oauth/device`);
    return browser.request(`${server.base}/oauth/device`, {
      form: { xsrf: field(entry.text, 'xsrf'), user_code: userCode },
    });
  }

  const message = (page: { text: string }) => /role="alert">([^<]*)</.exec(page.text)?.[1];

  test('after 10 wrong codes from an address even the right one is refused there; the right one before that works', async () => {
    const userCode = await startDevice();
    const guesser = new FormBrowser({ 'x-forwarded-for': '203.0.113.7' });
    for (let i = 0; i < 5; i++) {
      const wrong = await enter(guesser, WRONG_CODE);
      assert.equal(wrong.status, 200);
      assert.equal(
        message(wrong),
        'That code is wrong, has expired or has been used. Check it and try again.',
      );
    }
    // Below the limit the right code still leads on, to the confirmation.
    const right = await enter(guesser, userCode);
    assert.equal(right.status, 200);
    assert.match(right.text, /Check that the device shows this code/);
    for (let i = 5; i < 10; i++) assert.equal((await enter(guesser, WRONG_CODE)).status, 200);

    const refused = await enter(guesser, userCode);
    assert.equal(refused.status, 429);
    assert.match(message(refused) ?? '', /^Too many wrong codes\. Try again in 1[45] minutes\.$/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After: ${retryAfter}`);
    assert.doesNotMatch(refused.text, /Check that the device shows this code/);
    assert.equal(refused.headers.get('cache-control'), 'no-store');

    // Another address is not held up by this one's guesses.
    const other = await enter(new FormBrowser({ 'x-forwarded-for': '198.51.100.20' }), userCode);
    assert.equal(other.status, 200);
    assert.match(other.text, /Check that the device shows this code/);
  });

  test("a signed-in user's wrong codes count against the account from any address", async () => {
    const userCode = await startDevice();
    const browser = new FormBrowser({ 'x-forwarded-for': '192.0.2.1' });
    const form = await browser.request(`${server.base}/account/signin`);
    const signedIn = await browser.request(`${server.base}/account/signin`, {
      form: { csrf: field(form.text, 'csrf'), login: 'ann', password: PASSWORD },
    });
    assert.equal(signedIn.status, 303);
    for (let i = 0; i < 10; i++) {
      browser.extraHeaders['x-forwarded-for'] = `192.0.2.${i + 1}`;
      assert.equal((await enter(browser, WRONG_CODE)).status, 200);
    }
    browser.extraHeaders['x-forwarded-for'] = '192.0.2.100';
    const refused = await enter(browser, userCode);
    assert.equal(refused.status, 429);
    assert.match(message(refused) ?? '', /^Too many wrong codes\./);
    // The same address, without ann's session, is not held up by her account's count.
    const anonymous = await enter(new FormBrowser({ 'x-forwarded-for': '192.0.2.100' }), userCode);
    assert.equal(anonymous.status, 200);
    assert.match(anonymous.text, /Check that the device shows this code/);
  });
});
