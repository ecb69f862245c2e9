// The developer console without a browser (docs/developer-console.md): a developer registers an app and a
// webhook endpoint, sends it a test event, rotates and deletes; another developer's probes of every console
// URL and form with the first one's app, endpoint and delivery ids (and their other encodings) give 404 and
// change nothing, and every form without this browser's CSRF token (none, or another browser's) gives 403.
// DEVELOPER_CONSOLE=invite opens it to the users marked developers only, off to nobody.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, http, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  addClient,
  addUserWithPassword,
  authorize,
  FormBrowser,
  field,
  freePort,
  PASSWORD,
  pkce,
  tokenRequest,
} from '../helpers/oauth.ts';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.ts';

interface Signed {
  browser: FormBrowser;
  csrf: string;
}

async function signIn(base: string, login: string): Promise<Signed> {
  const browser = new FormBrowser();
  const page = await browser.request(`${base}/account/signin`);
  const csrf = field(page.text, 'csrf');
  const done = await browser.request(`${base}/account/signin`, { form: { csrf, login, password: PASSWORD } });
  assert.equal(done.status, 303);
  return { browser, csrf };
}

const testid = (text: string, id: string) => {
  const m = new RegExp(`data-testid="${id}">([^<]+)<`).exec(text);
  if (!m?.[1]) throw new Error(`no ${id} on the page:\n${text}`);
  return m[1];
};

/** Other spellings of an id that must name nothing of another's: as the API's isolation probes spell them. */
function encodings(id: string): string[] {
  return [
    id,
    id.toUpperCase(),
    encodeURIComponent(id).replace(/_/g, '%5F'),
    `${id}%00`,
    `%20${id}`,
    `${id}%2F..%2F..`,
    id.slice(0, -1),
  ];
}

describe('the developer console', () => {
  let env: Env;
  let server: InProcessServer;
  let receiver: Receiver;
  let ann: Signed;
  let eve: Signed;
  let app: { id: string; secret: string; redirectUri: string };
  let endpoint: { id: string; secret: string };
  let deliveryId: string;

  before(async () => {
    env = tempEnv();
    for (const login of ['ann', 'eve', 'bob']) await addUserWithPassword(env, login);
    await addClient(env, 'Operator App', ['--redirect-uri', 'https://operator.example.org/cb']);
    server = await serveInProcess(env, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '50' });
    receiver = await startReceiver();
    ann = await signIn(server.base, 'ann');
    eve = await signIn(server.base, 'eve');
  });
  after(async () => {
    await receiver?.close();
    await server?.stop();
    env?.cleanup();
  });

  test('ann registers an app with its endpoint, and a test event arrives signed', {
    timeout: 180_000,
  }, async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const refused = await ann.browser.request(`${server.base}/developers/apps/new`, {
      form: { csrf: ann.csrf, name: 'Bad', redirect_uri: 'http://localhost/cb', kind: 'confidential' },
    });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /rather than localhost/);
    const unknown = await ann.browser.request(`${server.base}/developers/apps/new`, {
      form: { csrf: ann.csrf, name: 'Bad', redirect_uri: redirectUri, kind: 'confidential', owner: 'eve' },
    });
    assert.equal(unknown.status, 400);
    const badKind = await ann.browser.request(`${server.base}/developers/apps/new`, {
      form: { csrf: ann.csrf, name: 'Bad', redirect_uri: redirectUri, kind: 'operator' },
    });
    assert.equal(badKind.status, 400);

    const made = await ann.browser.request(`${server.base}/developers/apps/new`, {
      form: {
        csrf: ann.csrf,
        name: 'Ann App',
        homepage: 'https://ann.example.org',
        description: 'Reads games',
        redirect_uri: `${redirectUri}\r\nhttps://ann.example.org/cb`,
        kind: 'confidential',
      },
    });
    assert.equal(made.status, 201);
    app = { id: testid(made.text, 'client-id'), secret: testid(made.text, 'client-secret'), redirectUri };
    const again = await ann.browser.request(`${server.base}/developers/apps/${app.id}`);
    assert.equal(again.status, 200);
    assert.equal(testid(again.text, 'client-id'), app.id);
    assert.doesNotMatch(again.text, /client-secret/, 'the secret is shown once');
    assert.equal(again.headers.get('content-security-policy')?.includes("frame-ancestors 'none'"), true);

    const added = await ann.browser.request(`${server.base}/developers/apps/${app.id}/webhooks`, {
      form: { csrf: ann.csrf, url: receiver.url },
    });
    assert.equal(added.status, 201);
    endpoint = {
      id: /\/developers\/webhooks\/(ep_[0-9a-f]+)\//.exec(added.text)?.[1] ?? '',
      secret: testid(added.text, 'webhook-secret'),
    };
    receiver.setSecrets([endpoint.secret]);
    const ping = await ann.browser.request(`${server.base}/developers/webhooks/${endpoint.id}/test`, {
      form: { csrf: ann.csrf },
    });
    assert.equal(ping.status, 200);
    await receiver.waitFor(
      (r) => r.some((x) => x.event.type === 'ping' && x.verifiedWith.length === 1),
      90_000,
      'the ping',
    );
    // Listed as delivered once the worker has recorded it.
    let page = '';
    const deadline = Date.now() + 90_000;
    while (!/<td>delivered<\/td>/.test(page) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      page = (await ann.browser.request(`${server.base}/developers/webhooks/${endpoint.id}`)).text;
    }
    assert.match(page, /<td>ping<\/td>\s*<td>delivered<\/td>\s*<td>204<\/td>\s*<td>\d+ ms<\/td>/);
    deliveryId = /\/developers\/deliveries\/(msg_[0-9a-f]+)\/redeliver/.exec(page)?.[1] ?? '';
    assert.notEqual(deliveryId, '');

    const listed = await cliJson<{ name: string; owner: string | null }[]>(env, ['apps', 'list']);
    assert.deepEqual(
      listed.map((a) => [a.name, a.owner]),
      [
        ['Operator App', null],
        ['Ann App', 'ann'],
      ],
    );
  });

  test("eve's probes of ann's app, endpoint and delivery give 404 and change nothing", {
    timeout: 300_000,
  }, async () => {
    const before = (await ann.browser.request(`${server.base}/developers/webhooks/${endpoint.id}`)).text;
    const base = server.base;
    for (const a of encodings(app.id)) {
      assert.equal((await eve.browser.request(`${base}/developers/apps/${a}`)).status, 404, a);
      for (const [action, form] of [
        ['secret', {}],
        ['delete', {}],
        ['webhooks', { url: receiver.url }],
      ] as const) {
        const answer = await eve.browser.request(`${base}/developers/apps/${a}/${action}`, {
          form: { csrf: eve.csrf, ...form },
        });
        assert.equal(answer.status, 404, `${action} ${a}`);
      }
    }
    for (const e of encodings(endpoint.id)) {
      assert.equal((await eve.browser.request(`${base}/developers/webhooks/${e}`)).status, 404, e);
      for (const action of ['disable', 'enable', 'rotate', 'remove', 'test', 'events']) {
        const answer = await eve.browser.request(`${base}/developers/webhooks/${e}/${action}`, {
          form: { csrf: eve.csrf },
        });
        assert.equal(answer.status, 404, `${action} ${e}`);
      }
    }
    for (const d of encodings(deliveryId)) {
      const answer = await eve.browser.request(`${base}/developers/deliveries/${d}/redeliver`, {
        form: { csrf: eve.csrf },
      });
      assert.equal(answer.status, 404, d);
    }
    // Eve's own lists show nothing of ann's.
    const own = await eve.browser.request(`${base}/developers`);
    assert.equal(own.status, 200);
    assert.doesNotMatch(own.text, /Ann App/);

    const appPage = await ann.browser.request(`${base}/developers/apps/${app.id}`);
    assert.equal(appPage.status, 200);
    assert.doesNotMatch(appPage.text, /before the latest rotation/, 'no rotation happened');
    assert.equal(
      (appPage.text.match(/\/developers\/webhooks\/ep_/g) ?? []).length,
      1,
      'one endpoint, no other',
    );
    const after = (await ann.browser.request(`${base}/developers/webhooks/${endpoint.id}`)).text;
    const rows = (text: string) => text.match(/<tbody>[\s\S]*<\/tbody>/)?.[0].replace(/value="[^"]*"/g, '');
    assert.equal(rows(after), rows(before), 'the delivery log is as it was');
    assert.match(after, /<dd>enabled<\/dd>/);
    assert.equal(receiver.received.length, 1, 'no second delivery');
  });

  test('every form without this browser’s CSRF token is refused with 403', { timeout: 180_000 }, async () => {
    const base = server.base;
    const forms: [string, Record<string, string>][] = [
      ['/developers/apps/new', { name: 'X', redirect_uri: 'https://x.example.org/cb', kind: 'confidential' }],
      [`/developers/apps/${app.id}/secret`, {}],
      [`/developers/apps/${app.id}/delete`, {}],
      [`/developers/apps/${app.id}/webhooks`, { url: receiver.url }],
      ...['disable', 'enable', 'rotate', 'remove', 'test', 'events'].map(
        (a): [string, Record<string, string>] => [`/developers/webhooks/${endpoint.id}/${a}`, {}],
      ),
      [`/developers/deliveries/${deliveryId}/redeliver`, {}],
      ['/account/tokens/new', { description: 'x', scope: 'user.read', expires_in_days: '30' }],
      ['/account/signout-everywhere', {}],
      [
        '/account/password',
        { current_password: PASSWORD, new_password: 'a new password', confirm_password: 'a new password' },
      ],
    ];
    for (const [path, form] of forms) {
      assert.equal(
        (await ann.browser.request(`${base}${path}`, { method: 'POST', form })).status,
        403,
        `${path} without`,
      );
      const foreign = await ann.browser.request(`${base}${path}`, {
        method: 'POST',
        form: { ...form, csrf: eve.csrf },
      });
      assert.equal(foreign.status, 403, `${path} with eve's token`);
    }
    const appPage = await ann.browser.request(`${base}/developers/apps/${app.id}`);
    assert.equal(appPage.status, 200, 'ann is still signed in, her app still there');
    assert.doesNotMatch(appPage.text, /before the latest rotation/);
    assert.equal(receiver.received.length, 1);
  });

  test('a user allows the app; a rotated secret keeps the old one for its grace; deleting ends every token', {
    timeout: 240_000,
  }, async () => {
    const base = server.base;
    const bob = new FormBrowser();
    const challenge = pkce();
    const back = await authorize(
      bob,
      base,
      { clientId: app.id, redirectUri: app.redirectUri, scope: 'user.read', pkce: challenge },
      'bob',
    );
    const code = back.searchParams.get('code') ?? '';
    const tokens = await tokenRequest(
      base,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: app.redirectUri,
        code_verifier: challenge.verifier,
      },
      { clientId: app.id, clientSecret: app.secret },
    );
    assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
    const access = String(tokens.json.access_token);
    let refresh = String(tokens.json.refresh_token);
    assert.equal((await http(`${base}/api/v1`, '/me', { token: access })).status, 200);

    const rotated = await ann.browser.request(`${base}/developers/apps/${app.id}/secret`, {
      form: { csrf: ann.csrf },
    });
    assert.equal(rotated.status, 200);
    const fresh = testid(rotated.text, 'client-secret');
    assert.notEqual(fresh, app.secret);
    assert.match(rotated.text, /24 hours/);
    for (const secret of [app.secret, fresh]) {
      const refreshed = await tokenRequest(
        base,
        { grant_type: 'refresh_token', refresh_token: refresh },
        { clientId: app.id, clientSecret: secret },
      );
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
      refresh = String(refreshed.json.refresh_token);
    }
    const wrong = await tokenRequest(
      base,
      { grant_type: 'refresh_token', refresh_token: refresh },
      { clientId: app.id, clientSecret: 'cps_wrong' },
    );
    assert.equal(wrong.status, 401);

    // Subscriptions: one event, then every one again; an unknown one is refused.
    const events = (form: Record<string, string>) =>
      ann.browser.request(`${base}/developers/webhooks/${endpoint.id}/events`, {
        method: 'POST',
        form: { csrf: ann.csrf, ...form },
      });
    assert.equal((await events({ events: 'game.deleted' })).status, 400);
    assert.equal((await events({})).status, 400, 'at least one event');
    assert.match(
      (await events({ events: 'grant.revoked' })).text,
      /<dd>grant\.revoked \(ping always\)<\/dd>/,
    );
    const both = await fetch(`${base}/developers/webhooks/${endpoint.id}/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: ['chessport_session', 'chessport_csrf']
          .map((n) => `${n}=${ann.browser.cookie(n)}`)
          .join('; '),
      },
      body: `csrf=${encodeURIComponent(ann.csrf)}&events=changes.available&events=grant.revoked`,
    });
    assert.match(await both.text(), /<dd>every event \(ping always\)<\/dd>/);
    const badAdd = await ann.browser.request(`${base}/developers/apps/${app.id}/webhooks`, {
      form: { csrf: ann.csrf, url: receiver.url, events: 'everything' },
    });
    assert.equal(badAdd.status, 400);

    // Disable, enable, redeliver: the receiver hears the ping again under its id.
    const disabled = await ann.browser.request(`${base}/developers/webhooks/${endpoint.id}/disable`, {
      form: { csrf: ann.csrf },
    });
    assert.match(disabled.text, /<dd>disabled: disabled by its developer<\/dd>/);
    const enabled = await ann.browser.request(`${base}/developers/webhooks/${endpoint.id}/enable`, {
      form: { csrf: ann.csrf },
    });
    assert.match(enabled.text, /<dd>enabled<\/dd>/);
    const redelivered = await ann.browser.request(`${base}/developers/deliveries/${deliveryId}/redeliver`, {
      form: { csrf: ann.csrf },
    });
    assert.equal(redelivered.status, 200);
    await receiver.waitFor((r) => r.length === 2, 90_000, 'the redelivery');
    assert.equal(receiver.received[1]?.id, receiver.received[0]?.id, 'the same webhook-id');

    const deleted = await ann.browser.request(`${base}/developers/apps/${app.id}/delete`, {
      form: { csrf: ann.csrf },
    });
    assert.equal(deleted.status, 303);
    assert.equal((await http(`${base}/api/v1`, '/me', { token: access })).status, 401);
    const after = await tokenRequest(
      base,
      { grant_type: 'refresh_token', refresh_token: refresh },
      { clientId: app.id, clientSecret: fresh },
    );
    assert.notEqual(after.status, 200);
    assert.equal((await ann.browser.request(`${base}/developers/apps/${app.id}`)).status, 404);
    assert.equal((await ann.browser.request(`${base}/developers/webhooks/${endpoint.id}`)).status, 404);
    const bobAccount = await bob.request(`${base}/account`);
    assert.doesNotMatch(bobAccount.text, /Ann App/);
    const names = (await cliJson<{ name: string }[]>(env, ['apps', 'list'])).map((a) => a.name);
    assert.deepEqual(names, ['Operator App']);
  });

  test('DEVELOPER_CONSOLE=invite opens it to invited users only, off to nobody', {
    timeout: 300_000,
  }, async () => {
    await server.stop();
    server = await serveInProcess(env, { DEVELOPER_CONSOLE: 'invite' });
    let eveNow = await signIn(server.base, 'eve');
    assert.equal((await eveNow.browser.request(`${server.base}/developers`)).status, 403);
    const made = await eveNow.browser.request(`${server.base}/developers/apps/new`, {
      form: {
        csrf: eveNow.csrf,
        name: 'Eve App',
        redirect_uri: 'https://eve.example.org/cb',
        kind: 'public',
      },
    });
    assert.equal(made.status, 403);
    const marked = await cliInProcess(env, ['users', 'update', 'eve', '--developer']);
    assert.equal(marked.code, 0, marked.stderr);
    assert.equal((await eveNow.browser.request(`${server.base}/developers`)).status, 200);
    await server.stop();
    server = await serveInProcess(env, { DEVELOPER_CONSOLE: 'off' });
    eveNow = await signIn(server.base, 'eve');
    assert.equal((await eveNow.browser.request(`${server.base}/developers`)).status, 404);
    assert.doesNotMatch((await eveNow.browser.request(`${server.base}/account`)).text, /Developer console/);
  });
});
