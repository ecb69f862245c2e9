// Every endpoint refuses missing, garbage, revoked and expired tokens and tokens without its scope, in the
// spec's error shape with RFC 6750 challenges; every method but GET and HEAD is 405; unknown paths 404.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { METHODS } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { http, issueToken, ROOT } from '../helpers/harness.ts';
import { raw } from '../helpers/production.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
let aliceGame: string;
before(async () => {
  world = await makeWorld();
  const games = await http<{ data: { id: string }[] }>(world.base, '/games?limit=1', {
    token: world.tokens.alice,
  });
  aliceGame = games.json.data[0]?.id as string;
});
after(async () => world?.stop());

const ALL_SCOPES = 'user.read,databases.read,games.read';

/** The path with Alice's own game in place of Bob's, for the tests that need a 200 from every endpoint. */
const own = (path: string) => path.replace(world.bob.gameIds[0] as string, aliceGame);

const endpoints = () => [
  { path: '/me', scope: 'user.read' },
  { path: '/databases', scope: 'databases.read' },
  { path: `/databases/${world.alice.main.id}/games`, scope: 'games.read' },
  { path: `/databases/${world.alice.main.slug}/games?format=pgn`, scope: 'games.read' },
  { path: '/games', scope: 'games.read' },
  { path: `/games/${world.bob.gameIds[0]}`, scope: 'games.read' },
  { path: '/changes', scope: 'games.read' },
];

/**
 * The challenge of a request without bearer credentials: the realm, and where the protected-resource metadata
 * is (RFC 9728 5.1), which names the server that issues tokens.
 */
const bareChallenge = (w: World) =>
  `Bearer realm="chessport", resource_metadata="${w.base.replace(/\/api\/v1$/, '')}/.well-known/oauth-protected-resource"`;

function assertErrorBody(body: unknown, code: string) {
  assert.deepEqual(Object.keys(body as object).sort(), ['error', 'error_description']);
  const { error, error_description } = body as { error: string; error_description: string };
  assert.equal(error, code);
  assert.equal(typeof error_description, 'string');
  assert.ok(error_description.length > 0);
}

describe('authentication', () => {
  test('no token: 401 invalid_token with a bare Bearer challenge naming the resource metadata', async () => {
    for (const { path } of endpoints()) {
      const res = await http(world.base, path);
      assert.equal(res.status, 401, path);
      assertErrorBody(res.json, 'invalid_token');
      assert.equal(res.headers.get('www-authenticate'), bareChallenge(world), path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    }
  });

  test('the challenge without credentials is the one docs/api.md says, word for word', async () => {
    const errors = readFileSync(join(ROOT, 'docs/api.md'), 'utf8').split('### Errors')[1]?.split('\n### ')[0];
    const said = /without credentials gets exactly\s+`([^`]+)`/.exec(errors ?? '')?.[1];
    assert.ok(said, 'docs/api.md names the challenge of a request without credentials');
    const issuer = world.base.replace(/\/api\/v1$/, '');
    const res = await http(world.base, '/me');
    assert.equal(res.headers.get('www-authenticate'), said.replace('<issuer>', issuer));
  });

  const badTokens: [string, (w: World) => Record<string, string>][] = [
    ['garbage token', () => ({ authorization: 'Bearer cp_not-a-real-token' })],
    ['revoked token', (w) => ({ authorization: `Bearer ${w.tokens.aliceRevoked}` })],
    ['expired token', (w) => ({ authorization: `Bearer ${w.tokens.aliceExpired}` })],
    ['empty Bearer', () => ({ authorization: 'Bearer ' })],
    ['token with a space', () => ({ authorization: 'Bearer a b' })],
  ];
  for (const [name, headers] of badTokens) {
    test(`${name}: 401 invalid_token with error="invalid_token" in the challenge`, async () => {
      for (const { path } of endpoints()) {
        const res = await http(world.base, path, { headers: headers(world) });
        assert.equal(res.status, 401, `${name} ${path}`);
        assertErrorBody(res.json, 'invalid_token');
        const challenge = res.headers.get('www-authenticate') ?? '';
        assert.match(
          challenge,
          /^Bearer realm="chessport", error="invalid_token", error_description="[^"]+", resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource"$/,
        );
      }
    });
  }

  // RFC 6750 section 3: a request that "lacks any authentication information (e.g., the client ... attempted
  // using an unsupported authentication scheme)" gets no error attribute, as one without the header.
  test('credentials of another scheme, or an empty header: 401 invalid_token with the bare challenge', async () => {
    const headers = [
      'Basic YWxpY2U6c2VjcmV0',
      `Token ${world.tokens.alice}`,
      `Bearer_${world.tokens.alice}`,
      `Bearertoken`,
      '',
    ];
    for (const authorization of headers) {
      for (const { path } of endpoints()) {
        const res = await raw(world.base, path, { headers: { authorization } });
        assert.equal(res.status, 401, `${authorization} ${path}`);
        assertErrorBody(JSON.parse(res.body.toString()), 'invalid_token');
        assert.equal(res.headers['www-authenticate'], bareChallenge(world), `${authorization} ${path}`);
      }
    }
  });

  test('the scheme name is case-insensitive (RFC 9110)', async () => {
    const res = await http(world.base, '/me', { headers: { authorization: `bearer ${world.tokens.alice}` } });
    assert.equal(res.status, 200);
  });

  test('more than one Authorization header: 400 invalid_request (RFC 6750 3.1), whichever is valid', async () => {
    const valid = (w: World) => `Bearer ${w.tokens.alice}`;
    const pairs: [string, (w: World) => string[]][] = [
      ['the same valid token twice', (w) => [valid(w), valid(w)]],
      ['two valid tokens of different users', (w) => [valid(w), `Bearer ${w.tokens.bob}`]],
      ['a valid token, then garbage', (w) => [valid(w), 'Bearer cp_not-a-real-token']],
      ['garbage, then a valid token', (w) => [`Basic ${w.tokens.alice}`, valid(w)]],
      ['three lines', (w) => [valid(w), valid(w), valid(w)]],
    ];
    for (const [name, lines] of pairs) {
      for (const { path } of endpoints()) {
        const res = await raw(world.base, path, { headers: { authorization: lines(world) } });
        assert.equal(res.status, 400, `${name} ${path}`);
        assertErrorBody(JSON.parse(res.body.toString()), 'invalid_request');
        assert.equal(
          res.headers['www-authenticate'],
          'Bearer realm="chessport", error="invalid_request", ' +
            'error_description="The request carries more than one Authorization header."',
        );
        assert.ok(res.headers['x-ratelimit-remaining'], 'counted like a refused token');
      }
    }
    // One line is still fine, and a comma inside one line is one (malformed) token, not two headers.
    const one = await raw(world.base, '/me', { headers: { authorization: [valid(world)] } });
    assert.equal(one.status, 200);
    const joined = await raw(world.base, '/me', {
      headers: { authorization: `${valid(world)}, ${valid(world)}` },
    });
    assert.equal(joined.status, 401);
  });

  test('a token without the scope: 403 insufficient_scope naming the scope', async () => {
    for (const { path, scope } of endpoints()) {
      const res = await http(world.base, path, { token: world.tokens.aliceMeOnly });
      if (scope === 'user.read') {
        assert.equal(res.status, 200, path);
        continue;
      }
      assert.equal(res.status, 403, path);
      assertErrorBody(res.json, 'insufficient_scope');
      assert.equal(
        res.headers.get('www-authenticate'),
        `Bearer realm="chessport", error="insufficient_scope", error_description="The access token lacks the ${scope} scope.", scope="${scope}"`,
      );
    }
  });

  // Each endpoint takes exactly its scope: a token holding only another scope, or the other two, is 403.
  test('scopes: each endpoint answers a token with its scope and refuses one without it', async () => {
    const scopeSets = [
      'user.read',
      'databases.read',
      'games.read',
      'databases.read,games.read',
      'user.read,games.read',
      'user.read,databases.read',
    ];
    for (const scopes of scopeSets) {
      const token = await issueToken(world.env, 'alice', 'app-one', scopes);
      for (const { path, scope } of endpoints()) {
        const res = await http(world.base, own(path), { token });
        const what = `${scopes} ${path}`;
        if (scopes.split(',').includes(scope)) {
          assert.equal(res.status, 200, what);
          continue;
        }
        assert.equal(res.status, 403, what);
        assertErrorBody(res.json, 'insufficient_scope');
        assert.match(res.headers.get('www-authenticate') ?? '', new RegExp(`, scope="${scope}"$`), what);
      }
    }
  });

  test('a token with an expiry is accepted until it expires', async () => {
    const token = await issueToken(world.env, 'alice', 'app-one', ALL_SCOPES, ['--expires-in', '1h']);
    for (const { path } of endpoints()) {
      const res = await http(world.base, own(path), { token });
      assert.equal(res.status, 200, path);
    }
  });

  test('authentication comes before parameter validation: nothing is revealed without a token', async () => {
    const res = await http(world.base, '/games?limit=abc');
    assert.equal(res.status, 401);
  });
});

describe('methods and paths', () => {
  test('POST, PUT, PATCH and DELETE are 405 method_not_allowed with Allow: GET, HEAD, OPTIONS', async () => {
    for (const { path } of endpoints()) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const res = await http(world.base, path, { method, token: world.tokens.alice });
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
        assertErrorBody(res.json, 'method_not_allowed');
      }
    }
  });

  // Node's parser takes these; CONNECT goes to a 'connect' listener, never to the routes.
  const otherMethods = METHODS.filter((m) => !['GET', 'HEAD', 'OPTIONS', 'CONNECT'].includes(m));

  test('every other method Node accepts is 405 with Allow: GET, HEAD, OPTIONS, with or without a token', async () => {
    assert.ok(otherMethods.includes('TRACE') && otherMethods.includes('QUERY') && otherMethods.length > 25);
    for (const { path } of [...endpoints(), { path: '/openapi.json' }]) {
      for (const method of otherMethods) {
        for (const token of [null, world.tokens.alice]) {
          const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
          const res = await raw(world.base, path, { method, headers });
          assert.equal(res.status, 405, `${method} ${path}`);
          assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS', `${method} ${path}`);
          assertErrorBody(JSON.parse(res.body.toString()), 'method_not_allowed');
        }
      }
    }
  });

  test('the method is refused before any body is read: 405 on API paths, 404 on unknown ones', async () => {
    const bodies: [string, Record<string, string>, string | undefined][] = [
      ['POST', { 'content-type': 'application/json' }, '{bad'],
      ['POST', { 'content-type': 'application/xml' }, '<a/>'],
      ['PUT', { 'content-type': 'text/plain; charset=nope=' }, 'x'],
      ['PATCH', { 'content-type': 'application/json' }, ''],
      ['QUERY', {}, undefined],
      ['QUERY', { 'content-type': 'application/json' }, '{bad'],
      ['DELETE', { 'content-type': 'application/json', 'content-length': '5' }, '{bad}'],
      ['POST', { 'content-type': 'application/json' }, `{"a":"${'x'.repeat(2_000_000)}"}`],
    ];
    for (const [method, headers, body] of bodies) {
      for (const [path, status] of [
        ['/me', 405],
        ['/openapi.json', 405],
        ['/nope', 404],
      ] as const) {
        for (const token of [null, world.tokens.alice]) {
          const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
          const res = await raw(world.base, path, { method, headers: { ...headers, ...auth }, body });
          const what = `${method} ${path} ${headers['content-type']} ${body?.slice(0, 10)}`;
          assert.equal(res.status, status, what);
          const json = JSON.parse(res.body.toString());
          assertErrorBody(json, status === 405 ? 'method_not_allowed' : 'not_found');
          if (status === 405) assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
        }
      }
    }
  });

  test('HEAD answers like GET without a body', async () => {
    for (const { path } of endpoints()) {
      const get = await http(world.base, path, { token: world.tokens.alice });
      const head = await http(world.base, path, { method: 'HEAD', token: world.tokens.alice });
      assert.equal(head.status, get.status, path);
      assert.equal(head.text, '');
      assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
    }
  });

  test('OPTIONS names the allowed methods', async () => {
    const res = await http(world.base, '/games', { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
  });

  test('unknown paths are 404 not_found in the error shape, with or without a token', async () => {
    for (const path of ['/nope', '/games/x/y', '/me/', '/../v2/me', '/GAMES']) {
      for (const token of [null, world.tokens.alice]) {
        const res = await http(world.base, path, { token });
        assert.equal(res.status, 404, path);
        assertErrorBody(res.json, 'not_found');
      }
    }
    const root = await http(world.server.base, '/api/v2/me', { token: world.tokens.alice });
    assert.equal(root.status, 404);
    assertErrorBody(root.json, 'not_found');
  });

  test('paths the docs page refuses to serve are 404 too: names too long for a file, empty segments', async () => {
    assert.equal((await raw(world.server.base, '/docs/static/index.css')).status, 200);
    for (const path of [`/docs/static/${'a'.repeat(300)}`, '/docs/static//index.css']) {
      const res = await raw(world.server.base, path);
      assert.equal(res.status, 404, path.slice(0, 60));
      assertErrorBody(JSON.parse(res.body.toString()), 'not_found');
    }
  });
});
