// The suite of the guess throttles (sign-in and device code entry) against a hostile client: a burst of 100
// concurrent wrong passwords, or wrong user codes, from one address gets 10 checked (401, or the wrong-code page) and
// the rest refused unchecked (429), and the right password or code after it is refused too; an address that
// sprays many accounts is held to 10 in all; another address and another account are not held up; a right
// password or code is not counted. Each runs on one instance with its counters in the process, on one with
// them in Redis, on two sharing Redis (the burst split between them), and on one whose Redis does not answer
// (it counts in the process alone). The server trusts X-Forwarded-For from loopback (TRUST_PROXY), so each
// client of a test stands at an address of its own.
// Each setup is a file of its own (test/api/oauth-throttle-*.test.ts), so that the four run side by side. The
// servers run in the test's process (in-process.ts), each instance an application with its own counters.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Env, tempEnv } from './harness.ts';
import { type InProcessServer, serveInProcess } from './in-process.ts';
import {
  addClient,
  addUserWithPassword,
  type Client,
  FormBrowser,
  field,
  freePort,
  PASSWORD,
  type Page,
  tokenRequest,
} from './oauth.ts';

/** Letters no user code has (its charset is base-20: no vowels, nor Y), so the code is wrong. */
const WRONG_CODE = 'AAAA-AAAA';
const BURST = 100;
const LIMIT = 10;

/** Where the counters live: one instance or two, in the process, in Redis, or with a Redis that does not answer. */
export interface ThrottleSetup {
  name: string;
  instances: number;
  redis: 'none' | 'shared' | 'unreachable';
}

/** How many answers had each status. */
function tally(pages: Page[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const page of pages) counts[page.status] = (counts[page.status] ?? 0) + 1;
  return counts;
}

const message = (page: { text: string }) => /role="alert">([^<]*)</.exec(page.text)?.[1];

export function guessThrottleSuite(setup: ThrottleSetup): void {
  const skip = setup.redis === 'shared' && !process.env.TEST_REDIS_URL ? 'set TEST_REDIS_URL to run' : false;
  describe(`OAuth: the guess throttles, ${setup.name}`, { skip }, () => {
    let env: Env;
    let servers: InProcessServer[] = [];
    let device: Client;
    /** The server for the i-th request of a burst: the instances in turn. */
    const base = (i = 0) => (servers[i % servers.length] as InProcessServer).base;

    before(async () => {
      env = tempEnv();
      for (const login of ['ann', 'bob', 'cat', 'tess']) await addUserWithPassword(env, login);
      device = await addClient(env, 'Chess CLI', ['--device', '--public']);
      const extra: NodeJS.ProcessEnv = { TRUST_PROXY: 'loopback' };
      if (setup.redis === 'shared') {
        extra.REDIS_URL = process.env.TEST_REDIS_URL;
        extra.REDIS_PREFIX = `chessport-test-${randomUUID()}:`;
      } else if (setup.redis === 'unreachable') {
        extra.REDIS_URL = `redis://127.0.0.1:${await freePort()}`;
      }
      for (let i = 0; i < setup.instances; i++) servers.push(await serveInProcess(env, extra));
    });
    after(async () => {
      for (const server of servers) await server.stop();
      servers = [];
      env?.cleanup();
    });

    /** Posts the sign-in form of /account/signin from `address`, at the i-th server. */
    async function signIn(address: string, login: string, password: string, i = 0): Promise<Page> {
      const browser = new FormBrowser({ 'x-forwarded-for': address });
      const form = await browser.request(`${base(i)}/account/signin`);
      return browser.request(`${base(i)}/account/signin`, {
        form: { csrf: field(form.text, 'csrf'), login, password },
      });
    }

    /** Sign-in forms from `address`, fetched first, then all posted at once, spread over the servers. */
    async function signInBurst(address: string, login: (i: number) => string): Promise<Page[]> {
      const browser = new FormBrowser({ 'x-forwarded-for': address });
      const csrf = field((await browser.request(`${base()}/account/signin`)).text, 'csrf');
      return Promise.all(
        Array.from({ length: BURST }, (_, i) =>
          browser.request(`${base(i)}/account/signin`, {
            form: { csrf, login: login(i), password: `wrong ${i}` },
          }),
        ),
      );
    }

    async function startDevice(): Promise<string> {
      const started = await tokenRequest(
        base(),
        { client_id: device.clientId, scope: 'user.read' },
        undefined,
        '/oauth/device/auth',
      );
      assert.equal(started.status, 200, JSON.stringify(started.json));
      return String(started.json.user_code);
    }

    /** The code entry form of /oauth/device at the i-th server, ready to post a code from `address`. */
    async function codeForm(address: string, i = 0) {
      const browser = new FormBrowser({ 'x-forwarded-for': address });
      const xsrf = field((await browser.request(`${base(i)}/oauth/device`)).text, 'xsrf');
      return (userCode: string) =>
        browser.request(`${base(i)}/oauth/device`, { form: { xsrf, user_code: userCode } });
    }

    test('100 concurrent wrong passwords for one account from one address: 10 checked, then even the right one is refused', async () => {
      const answers = await signInBurst('203.0.113.1', () => 'ann');
      assert.deepEqual(tally(answers), { 401: LIMIT, 429: BURST - LIMIT });
      for (const answer of answers) {
        if (answer.status === 429) assert.match(message(answer) ?? '', /^Too many failed sign-ins\./);
      }
      for (let i = 0; i < servers.length; i++) {
        const right = await signIn('203.0.113.1', 'ann', PASSWORD, i);
        assert.equal(right.status, 429);
        const retryAfter = Number(right.headers.get('retry-after'));
        assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After: ${retryAfter}`);
        assert.equal(
          right.headers.getSetCookie().filter((c) => c.startsWith('chessport_session=')).length,
          0,
        );
        // The account is held up from any address: its own limit is spent too.
        assert.equal((await signIn('198.51.100.1', 'ann', PASSWORD, i)).status, 429);
      }
      // Another account from another address is not held up.
      assert.equal((await signIn('198.51.100.1', 'bob', PASSWORD)).status, 303);
    });

    test('100 concurrent wrong passwords for 100 accounts from one address: 10 checked in all', async () => {
      const answers = await signInBurst('203.0.113.2', (i) => `nobody-${i}`);
      assert.deepEqual(tally(answers), { 401: LIMIT, 429: BURST - LIMIT });
      // The address is held up, whatever account it names; bob from elsewhere is not.
      assert.equal((await signIn('203.0.113.2', 'bob', PASSWORD)).status, 429);
      assert.equal((await signIn('198.51.100.2', 'bob', PASSWORD)).status, 303);
    });

    test('a right password is not counted: 12 sign-ins in a row from one address all succeed, then 10 wrong ones are checked', async () => {
      for (let i = 0; i < LIMIT + 2; i++) {
        assert.equal((await signIn('203.0.113.3', 'cat', PASSWORD, i)).status, 303, `sign-in ${i}`);
      }
      for (let i = 0; i < LIMIT; i++) {
        assert.equal((await signIn('203.0.113.3', 'cat', `wrong ${i}`, i)).status, 401, `wrong ${i}`);
      }
      assert.equal((await signIn('203.0.113.3', 'cat', PASSWORD)).status, 429);
    });

    test('failures count against the account from any address and on every instance; an unknown login reads as a wrong password', async () => {
      const wrong = await signIn('192.0.2.1', 'tess', 'not the password');
      const unknown = await signIn('192.0.2.1', 'nobody-here', 'not the password');
      assert.equal(wrong.status, 401);
      assert.equal(unknown.status, 401);
      assert.equal(message(wrong), 'The login or the password is wrong.');
      assert.equal(message(unknown), message(wrong));
      for (let i = 1; i < LIMIT; i++) {
        assert.equal((await signIn(`192.0.2.${i + 1}`, 'tess', `wrong ${i}`, i)).status, 401);
      }
      for (let i = 0; i < servers.length; i++) {
        const throttled = await signIn('192.0.2.100', 'tess', PASSWORD, i);
        assert.equal(throttled.status, 429);
        assert.match(message(throttled) ?? '', /^Too many failed sign-ins\. Try again in 1[45] minutes\.$/);
      }
      // The address is not held up for another account.
      assert.equal((await signIn('192.0.2.100', 'bob', PASSWORD)).status, 303);
    });

    test('100 concurrent wrong user codes from one address: 10 looked up, then even the right code is refused', async () => {
      const userCode = await startDevice();
      const forms = await Promise.all(Array.from({ length: BURST }, (_, i) => codeForm('203.0.113.4', i)));
      const answers = await Promise.all(forms.map((enter) => enter(WRONG_CODE)));
      assert.deepEqual(tally(answers), { 200: LIMIT, 429: BURST - LIMIT });
      for (const answer of answers) {
        assert.match(
          message(answer) ?? '',
          answer.status === 200 ? /^That code is wrong/ : /^Too many wrong codes\. Try again in/,
        );
      }
      for (let i = 0; i < servers.length; i++) {
        const refused = await (await codeForm('203.0.113.4', i))(userCode);
        assert.equal(refused.status, 429);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
        assert.doesNotMatch(refused.text, /Check that the device shows this code/);
      }
      // Another address enters the code as before.
      const other = await (await codeForm('198.51.100.4'))(userCode);
      assert.equal(other.status, 200);
      assert.match(other.text, /Check that the device shows this code/);
    });

    test('a right user code is not counted: 12 entries of it from one address all lead on', async () => {
      const userCode = await startDevice();
      for (let i = 0; i < LIMIT + 2; i++) {
        const right = await (await codeForm('203.0.113.5', i))(userCode);
        assert.equal(right.status, 200, `entry ${i}`);
        assert.match(right.text, /Check that the device shows this code/);
      }
    });
  });
}
