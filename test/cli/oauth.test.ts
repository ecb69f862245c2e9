// The operator's side of OAuth: registering apps as clients (redirect URIs checked, the secret shown once and
// kept as a hash), changing them, setting passwords without echo or from standard input, and the server's
// refusal of an issuer that would hand out codes and tokens over plain http.
// The commands run in the test's process (inProcess: cliInProcess, standard input given whole with `stdin`).
// Child processes stay for the servers (startServer), the password typed on a terminal (script(1)), one
// password given through a real pipe (cliWithInput) and cliBothWays, which checks that the real binary
// prints what the in-process run prints, for a listing and a refusal.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { cliInProcess as inProcess } from '../helpers/cli-in-process.ts';
import { BIN, cliBothWays, cliJson, type Env, http, startServer, tempEnv } from '../helpers/harness.ts';
import { cliWithInput } from '../helpers/oauth.ts';
import { storeText } from '../helpers/stores.ts';

const run = promisify(execFile);

interface AppJson {
  id: string;
  clientId: string | null;
  clientSecret: string | null;
  oauth: { type: string; redirectUris: string[]; deviceFlow: boolean } | null;
}

describe('apps as OAuth clients', () => {
  let env: Env;
  before(() => {
    env = tempEnv();
  });
  after(() => env?.cleanup());

  test('a confidential client: its id and its secret, shown once; only the hash is kept', async () => {
    const app = await cliJson<AppJson>(env, [
      'apps',
      'add',
      'web',
      '--redirect-uri',
      'https://app.example.org/callback',
      '--redirect-uri',
      'http://127.0.0.1:8000/callback',
    ]);
    assert.equal(app.clientId, app.id);
    assert.match(app.clientSecret ?? '', /^cps_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(app.oauth, {
      type: 'confidential',
      redirectUris: ['https://app.example.org/callback', 'http://127.0.0.1:8000/callback'],
      deviceFlow: false,
    });
    assert.ok(!(await storeText(env.databaseUrl)).includes(app.clientSecret ?? ''));
    const listed = await cliJson<AppJson[]>(env, ['apps', 'list']);
    assert.ok(listed.every((a) => !('clientSecret' in a)));
    const human = await cliBothWays(env, ['apps', 'list']);
    assert.match(human.stdout, /web .* confidential, https:\/\/app\.example\.org\/callback/);
  });

  test('a public client has no secret; an app without --redirect-uri or --device is no client', async () => {
    const native = await cliJson<AppJson>(env, [
      'apps',
      'add',
      'native',
      '--redirect-uri',
      'http://[::1]/cb',
      '--public',
    ]);
    assert.equal(native.clientSecret, null);
    assert.equal(native.oauth?.type, 'public');
    const tool = await cliJson<AppJson>(env, ['apps', 'add', 'tool', '--device', '--public']);
    assert.deepEqual(tool.oauth, { type: 'public', redirectUris: [], deviceFlow: true });
    const plain = await cliJson<AppJson>(env, ['apps', 'add', 'plain']);
    assert.equal(plain.clientId, null);
    assert.equal(plain.oauth, null);
    const human = await inProcess(env, ['apps', 'add', 'human', '--redirect-uri', 'https://h.example/cb']);
    assert.match(
      human.stdout,
      /^registered app human\nclient id: [0-9a-f-]{36}\nclient secret: cps_\S+\n\(shown once/,
    );
  });

  test('redirect URIs: https, or http on a loopback address; no fragment, no credentials', async () => {
    for (const [uri, reason] of [
      ['http://app.example.org/callback', /https, or http on 127\.0\.0\.1 or \[::1\]/],
      ['http://localhost:3000/callback', /use http:\/\/127\.0\.0\.1/],
      ['http://127.0.0.2:3000/callback', /https, or http on 127\.0\.0\.1 or \[::1\]/],
      ['https://app.example.org/callback#frag', /without a fragment/],
      ['https://user:pw@app.example.org/cb', /credentials/],
      ['/callback', /absolute URL/],
      ['javascript:alert(1)', /https, or http/],
    ] as const) {
      const result = await inProcess(env, ['apps', 'add', `bad-${uri.length}`, '--redirect-uri', uri]);
      assert.equal(result.code, 1, uri);
      assert.match(result.stderr, reason, uri);
    }
    const lone = await inProcess(env, ['apps', 'add', 'lone', '--public']);
    assert.match(lone.stderr, /--public makes an OAuth client: give --redirect-uri or --device too/);
    assert.equal((await cliJson<AppJson[]>(env, ['apps', 'list'])).filter((a) => a.clientId).length, 4);
  });

  test('apps update: new redirect URIs, the device flow, a new secret; an app becomes a client', async () => {
    const updated = await cliJson<AppJson>(env, [
      'apps',
      'update',
      'web',
      '--redirect-uri',
      'https://new.example/cb',
    ]);
    assert.deepEqual(updated.oauth?.redirectUris, ['https://new.example/cb']);
    assert.equal(updated.clientSecret, null, 'the secret stays, unshown');
    const secret = await cliJson<AppJson>(env, ['apps', 'update', 'web', '--new-secret', '--device']);
    assert.match(secret.clientSecret ?? '', /^cps_/);
    assert.equal(secret.oauth?.deviceFlow, true);
    const became = await cliJson<AppJson>(env, [
      'apps',
      'update',
      'plain',
      '--redirect-uri',
      'https://p.example/cb',
    ]);
    assert.equal(became.clientId, became.id);
    assert.match(became.clientSecret ?? '', /^cps_/);
    const refused = await inProcess(env, ['apps', 'update', 'native', '--new-secret']);
    assert.match(refused.stderr, /is a public client: it has no secret/);
    const none = await cliBothWays(env, ['apps', 'update', 'nothing-here', '--device']);
    assert.match(none.stderr, /no app "nothing-here"/);
  });
});

describe('users passwd', () => {
  let env: Env;
  before(async () => {
    env = tempEnv();
    await cliJson(env, ['users', 'add', 'ann']);
  });
  after(() => env?.cleanup());

  test('--stdin reads it for scripts; it is kept as a scrypt hash, never in the clear', async () => {
    const set = await cliWithInput(env, ['users', 'passwd', 'ann', '--stdin'], 'a fine long password\n');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'set the password of ann\n');
    const text = await storeText(env.databaseUrl);
    assert.ok(!text.includes('a fine long password'));
    assert.ok(text.includes('$scrypt$ln=15,r=8,p=1$'));
    const short = await inProcess(env, ['users', 'passwd', 'ann', '--stdin'], { stdin: 'short\n' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /the password must be 8 to 1024 characters, got 5: nothing changed/);
    const nobody = await inProcess(env, ['users', 'passwd', 'nobody', '--stdin'], {
      stdin: 'a fine long password\n',
    });
    assert.match(nobody.stderr, /no user "nobody"/);
  });

  test('without --stdin and without a terminal, it says to use --stdin', async () => {
    const result = await inProcess(env, ['users', 'passwd', 'ann'], { stdin: 'a fine long password\n' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /standard input is not a terminal: give the password on it with --stdin/);
  });

  test('on a terminal it is asked twice and never echoed', {
    skip: !existsSync('/usr/bin/script') && 'no script(1)',
  }, async () => {
    // script(1) gives the command a terminal; what it shows of it is in the typescript output.
    const typed = 'terminal secret 1\rterminal secret 1\r';
    const command = `sleep 1; printf '${typed.slice(0, 18)}'; sleep 1; printf '${typed.slice(18)}'`;
    const { stdout } = await run(
      'sh',
      ['-c', `(${command}) | script -qec "${process.execPath} ${BIN} users passwd ann" /dev/null`],
      { env: env.env, cwd: env.dir },
    );
    assert.match(stdout, /New password: /);
    assert.match(stdout, /Again: /);
    assert.match(stdout, /set the password of ann/);
    assert.ok(!stdout.includes('terminal secret'), stdout);
  });
});

describe('serve: the issuer', () => {
  let env: Env;
  before(() => {
    env = tempEnv();
  });
  after(() => env?.cleanup());
  const serve = (extra: NodeJS.ProcessEnv, args: string[] = []) =>
    inProcess({ ...env, env: { ...env.env, ...extra } }, ['serve', '--port', '0', ...args]);

  test('PUBLIC_URL must be https, or http on a loopback address, and an origin', async () => {
    for (const [url, reason] of [
      ['http://chess.example.org', /PUBLIC_URL must be https unless its host is a loopback address/],
      ['https://chess.example.org/chessport', /must be an origin, without path, query or fragment/],
      ['https://chess.example.org/?x=1', /must be an origin/],
      ['ftp://chess.example.org', /invalid PUBLIC_URL scheme "ftp:\/\/"/],
      ['chess.example.org', /invalid PUBLIC_URL "chess\.example\.org"/],
    ] as const) {
      const result = await serve({ PUBLIC_URL: url });
      assert.equal(result.code, 1, url);
      assert.match(result.stderr, reason, url);
      assert.equal(result.stderr.split('\n').length, 2, 'one line');
    }
    const ttl = await serve({ OAUTH_ACCESS_TOKEN_TTL: '30d' });
    assert.match(ttl.stderr, /OAUTH_ACCESS_TOKEN_TTL must be from 60s to 1d, got "30d"/);
  });

  test('the limits of the OAuth paths are checked like the API rate limit', async () => {
    for (const [name, value, reason] of [
      ['OAUTH_RATE_LIMIT_MAX', '0', /OAUTH_RATE_LIMIT_MAX must be a positive integer, got "0"/],
      ['OAUTH_RATE_LIMIT_WINDOW', '60', /invalid OAUTH_RATE_LIMIT_WINDOW "60": write it like 90s/],
      ['OAUTH_RATE_LIMIT_WINDOW', '25d', /OAUTH_RATE_LIMIT_WINDOW is at most 24d, got "25d"/],
      ['OAUTH_FLOWS_PER_ADDRESS', 'many', /OAUTH_FLOWS_PER_ADDRESS must be a positive integer, got "many"/],
    ] as const) {
      const result = await serve({ [name]: value });
      assert.equal(result.code, 1, `${name}=${value}`);
      assert.match(result.stderr, reason);
      assert.equal(result.stderr.split('\n').length, 2, 'one line');
    }
  });

  test('a plain http PUBLIC_URL on a host that is not loopback starts, with one warning; on loopback, none', async () => {
    const warning = /OAuth over plain http on a host that is not loopback/g;
    const open = await startServer(env, { HOST: '0.0.0.0', PUBLIC_URL: 'http://127.0.0.1:8080' });
    try {
      const base = open.base.replace('0.0.0.0', '127.0.0.1');
      assert.equal((await http(base, '/.well-known/oauth-authorization-server')).status, 200);
    } finally {
      assert.equal(await open.stop(), 0);
    }
    assert.equal(open.log().match(warning)?.length, 1, open.log());
    assert.match(open.log(), /"level":40.*OAuth over plain http/);
    const local = await startServer(env, { HOST: '127.0.0.1', PUBLIC_URL: 'http://127.0.0.1:8080' });
    assert.equal(await local.stop(), 0);
    assert.doesNotMatch(local.log(), warning);
  });

  test('on an address that is not loopback, without PUBLIC_URL, the API serves and OAuth is off, saying so', async () => {
    const server = await startServer(env, { HOST: '0.0.0.0' });
    try {
      const base = server.base.replace('0.0.0.0', '127.0.0.1');
      assert.equal((await http(base, '/healthz')).status, 200);
      // No issuer to hand out: neither the metadata nor the endpoints exist, and a 401 names no metadata.
      assert.equal((await http(base, '/.well-known/oauth-authorization-server')).status, 404);
      assert.equal((await http(base, '/oauth/authorize')).status, 404);
      const refused = await http(base, '/api/v1/me');
      assert.equal(refused.status, 401);
      assert.doesNotMatch(refused.headers.get('www-authenticate') ?? '', /resource_metadata/);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    assert.match(
      server.log(),
      /OAuth is off: set PUBLIC_URL to the https address clients reach this server at/,
    );
  });
});
