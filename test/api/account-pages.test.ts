// The account page's password change and sign-out everywhere, and the personal token form's rules
// (docs/developer-console.md): the current password is required and the other sessions end; signing out
// everywhere ends every session; a token's scopes and expiry are checked strictly, and another user's token id
// (in every spelling) revokes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { addUserWithPassword, FormBrowser, field, PASSWORD } from '../helpers/oauth.ts';

interface Signed {
  browser: FormBrowser;
  csrf: string;
}

describe('the account pages', () => {
  let env: Env;
  let server: InProcessServer;

  async function signIn(login: string, password = PASSWORD): Promise<Signed> {
    const browser = new FormBrowser();
    const page = await browser.request(`${server.base}/account/signin`);
    const csrf = field(page.text, 'csrf');
    const done = await browser.request(`${server.base}/account/signin`, { form: { csrf, login, password } });
    assert.equal(done.status, 303, `${login} signs in`);
    return { browser, csrf };
  }

  const signedIn = async (s: Signed) => (await s.browser.request(`${server.base}/account`)).status === 200;

  before(async () => {
    env = tempEnv();
    await addUserWithPassword(env, 'ann');
    await addUserWithPassword(env, 'eve');
    server = await serveInProcess(env);
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('a password change needs the current one, and ends the other sessions', {
    timeout: 180_000,
  }, async () => {
    const here = await signIn('ann');
    const there = await signIn('ann');
    const change = (form: Record<string, string>) =>
      here.browser.request(`${server.base}/account/password`, { form: { csrf: here.csrf, ...form } });
    const fresh = 'a brand new passphrase';
    assert.equal(
      (await change({ current_password: 'wrong one', new_password: fresh, confirm_password: fresh })).status,
      401,
    );
    assert.equal(
      (await change({ current_password: PASSWORD, new_password: fresh, confirm_password: 'other' })).status,
      400,
    );
    assert.equal(
      (await change({ current_password: PASSWORD, new_password: 'short', confirm_password: 'short' })).status,
      400,
    );
    assert.equal(
      (
        await change({
          current_password: PASSWORD,
          new_password: fresh,
          confirm_password: fresh,
          login: 'eve',
        })
      ).status,
      400,
    );
    assert.ok(await signedIn(there), 'nothing changed yet');
    const done = await change({ current_password: PASSWORD, new_password: fresh, confirm_password: fresh });
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), '/account?done=password');
    assert.ok(await signedIn(here), 'this browser stays signed in');
    assert.ok(!(await signedIn(there)), 'the other session ended');
    const browser = new FormBrowser();
    const page = await browser.request(`${server.base}/account/signin`);
    const old = await browser.request(`${server.base}/account/signin`, {
      form: { csrf: field(page.text, 'csrf'), login: 'ann', password: PASSWORD },
    });
    assert.equal(old.status, 401, 'the old password is no more');
    await signIn('ann', fresh);
  });

  test('sign out everywhere ends every session of the user, and no other user’s', {
    timeout: 180_000,
  }, async () => {
    const one = await signIn('eve');
    const two = await signIn('eve');
    const ann = await signIn('ann', 'a brand new passphrase');
    const out = await one.browser.request(`${server.base}/account/signout-everywhere`, {
      form: { csrf: one.csrf },
    });
    assert.equal(out.status, 303);
    assert.ok(!(await signedIn(one)));
    assert.ok(!(await signedIn(two)));
    assert.ok(await signedIn(ann));
  });

  test('personal tokens: strict form, and another user’s token id revokes nothing', {
    timeout: 180_000,
  }, async () => {
    const eve = await signIn('eve');
    const ann = await signIn('ann', 'a brand new passphrase');
    const unsigned = await new FormBrowser().request(`${server.base}/account/tokens`);
    assert.equal(unsigned.status, 303);
    assert.equal(unsigned.headers.get('location'), '/account/signin?next=%2Faccount%2Ftokens');
    const cookieOf = (s: Signed) =>
      ['chessport_session', 'chessport_csrf'].map((n) => `${n}=${s.browser.cookie(n) ?? ''}`).join('; ');
    // Posted by hand: the form repeats `scope`, which FormBrowser's record of fields cannot.
    const make = (s: Signed, form: Record<string, string>, scopes: string[]) => {
      const body = new URLSearchParams({ csrf: s.csrf, ...form });
      for (const scope of scopes) body.append('scope', scope);
      return fetch(`${server.base}/account/tokens/new`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieOf(s) },
        body,
        redirect: 'manual',
      });
    };
    const status = async (s: Signed, form: Record<string, string>, scopes: string[]) =>
      (await make(s, form, scopes)).status;
    for (const [form, scopes] of [
      [{ description: 'x', expires_in_days: '0' }, ['user.read']],
      [{ description: 'x', expires_in_days: '366' }, ['user.read']],
      [{ description: 'x', expires_in_days: 'none' }, ['user.read']],
      [{ description: 'x', expires_in_days: '1e2' }, ['user.read']],
      [{ description: 'x', expires_in_days: '30' }, []],
      [{ description: 'x', expires_in_days: '30' }, ['admin']],
      [{ description: 'x', expires_in_days: '30' }, ['user.read', 'user.read']],
      [{ description: '', expires_in_days: '30' }, ['user.read']],
      [{ description: 'x', expires_in_days: '30', user: 'ann' }, ['user.read']],
    ] as [Record<string, string>, string[]][]) {
      assert.equal(await status(eve, form, scopes), 400, JSON.stringify([form, scopes]));
    }
    const made = await make(eve, { description: 'eve script', expires_in_days: '365' }, ['games.read']);
    assert.equal(made.status, 201);
    const token = /data-testid="personal-token">([^<]+)</.exec(await made.text())?.[1] ?? '';
    assert.equal((await http(`${server.base}/api/v1`, '/games', { token })).status, 200);
    const list = await eve.browser.request(`${server.base}/account/tokens`);
    const id = /\/account\/tokens\/([0-9a-f-]{36})\/revoke/.exec(list.text)?.[1] ?? '';
    assert.notEqual(id, '');
    for (const spelling of [
      id,
      id.toUpperCase(),
      `${id}%00`,
      encodeURIComponent(`${id} `),
      id.slice(0, -1),
    ]) {
      const probe = await ann.browser.request(`${server.base}/account/tokens/${spelling}/revoke`, {
        form: { csrf: ann.csrf },
      });
      assert.equal(probe.status, 404, spelling);
    }
    assert.doesNotMatch((await ann.browser.request(`${server.base}/account/tokens`)).text, /eve script/);
    assert.equal((await http(`${server.base}/api/v1`, '/games', { token })).status, 200, 'still works');
    const revoked = await eve.browser.request(`${server.base}/account/tokens/${id}/revoke`, {
      form: { csrf: eve.csrf },
    });
    assert.equal(revoked.status, 303);
    assert.equal((await http(`${server.base}/api/v1`, '/games', { token })).status, 401);
  });
});
