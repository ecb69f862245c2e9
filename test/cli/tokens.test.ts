// Token lifetimes: a lifetime out of range is refused before a token is stored, and a token whose expiry is
// beyond what a Date holds (stored before the range was checked) does not break listing or revoking.
// The commands run in the test's process (run: cliInProcess); no test here is about the process. cliBothWays
// checks that the real binary prints the same listing, and the same refusal, as the in-process run.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'app1']);
});
after(() => env?.cleanup());

const ISSUE = ['tokens', 'issue', '--user', 'alice', '--app', 'app1', '--scopes', 'games.read'];
const issue = (expiresIn: string, both = false) =>
  (both ? cliBothWays : run)(env, [...ISSUE, '--expires-in', expiresIn]);
const tokenCount = async () => (await cliJson<unknown[]>(env, ['tokens', 'list'])).length;

test('a lifetime over 100 years is refused in one line, and no token is stored', async () => {
  const before = await tokenCount();
  for (const lifetime of ['99999999d', '36501d', '876025h', '']) {
    const result = await issue(lifetime, lifetime === '36501d');
    assert.equal(result.code, 1, lifetime);
    assert.match(
      result.stderr,
      /^chessport: (--expires-in must be at most 36500d|invalid duration)[^\n]*\n$/,
    );
    assert.equal(result.stdout, '');
  }
  assert.equal(await tokenCount(), before);
});

test('100 years is accepted', async () => {
  const result = await issue('36500d');
  assert.equal(result.code, 0, result.stderr);
  assert.equal(await tokenCount(), 1);
});

test('a stored expiry beyond the range of a Date: tokens list and revoke still work', async () => {
  const issued = await cliJson<{ id: string }>(env, ISSUE);
  const db = new Database(env.databaseUrl);
  try {
    db.prepare('update tokens set expires_at = ? where id = ?').run(
      Date.now() + 99_999_999 * 86_400_000,
      issued.id,
    );
  } finally {
    db.close();
  }
  const listed = await cliJson<{ id: string; state: string; expiresAt: string }[]>(env, ['tokens', 'list']);
  const far = listed.find((t) => t.id === issued.id);
  assert.equal(far?.state, 'active');
  assert.equal(far?.expiresAt, '+275760-09-13T00:00:00.000Z', 'the latest date there is');
  assert.equal((await cliBothWays(env, ['tokens', 'list'])).code, 0);
  const revoked = await cliJson<{ state: string }>(env, ['tokens', 'revoke', issued.id]);
  assert.equal(revoked.state, 'revoked');
});
