// `chessport webhooks ...`: the operator's endpoints, as the CLI's conventions have it (docs/cli.md): one JSON
// document with --json, one-line errors, and every check before anything is written. An endpoint at a
// loopback, private or metadata address is refused without WEBHOOK_ALLOW_PRIVATE.
// The commands run in the test's process (run: cliInProcess); no test here is about the process. cliBothWays,
// a child process beside the in-process run, checks that the real binary prints the same list and refusal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'app1']);
});
after(() => env?.cleanup());

const add = (url: string, extra: NodeJS.ProcessEnv = {}) =>
  run({ ...env, env: { ...env.env, ...extra } }, ['webhooks', 'add', '--app', 'app1', '--url', url]);
const endpoints = () => cliJson<{ id: string; url: string; state: string }[]>(env, ['webhooks', 'list']);

/** A refusal: exit 1, one line on stderr, nothing on stdout. */
function refused(result: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 1, result.stdout);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^chessport: [^\n]+\n$/);
  assert.match(result.stderr, pattern);
}

describe('webhooks add: where an endpoint may point', () => {
  test('127.0.0.1, 10.0.0.1 and 169.254.169.254 (in any form) are refused, and nothing is written', async () => {
    const cases: [string, RegExp][] = [
      [
        'https://127.0.0.1/hook',
        /--url is refused: 127\.0\.0\.1 is a loopback address, not a public one \(WEBHOOK_ALLOW_PRIVATE=1 allows it/,
      ],
      ['https://2130706433/hook', /127\.0\.0\.1 is a loopback address/],
      ['https://[::ffff:127.0.0.1]/', /\[::ffff:7f00:1\] is a loopback address/],
      ['https://10.0.0.1/hook', /10\.0\.0\.1 is a private address/],
      [
        'https://169.254.169.254/latest/meta-data/',
        /169\.254\.169\.254 is a link-local address \(169\.254\.169\.254 is the cloud metadata service\)/,
      ],
      ['https://[fd00:ec2::254]/', /unique local/],
      ['https://localhost/hook', /localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/],
      ['https://nowhere.invalid/hook', /cannot resolve nowhere\.invalid/],
      ['http://hooks.example.org/', /must be https, not http/],
      ['https://user:secret@hooks.example.org/', /user name or password/],
      ['https://hooks.example.org/\n', /--url must not hold control characters/],
    ];
    for (const [url, pattern] of cases) refused(await add(url), pattern);
    assert.deepEqual(await endpoints(), []);
  });

  test('WEBHOOK_ALLOW_PRIVATE=1 allows a private address and http; anything but 1 or 0 is refused', async () => {
    refused(
      await add('http://127.0.0.1:9/', { WEBHOOK_ALLOW_PRIVATE: 'yes' }),
      /invalid WEBHOOK_ALLOW_PRIVATE "yes": use 1/,
    );
    refused(await add('http://127.0.0.1:9/', { WEBHOOK_ALLOW_PRIVATE: '0' }), /must be https, not http/);
    const result = await add('http://127.0.0.1:9/hook', { WEBHOOK_ALLOW_PRIVATE: '1' });
    assert.equal(result.code, 0, result.stderr);
    const [id, secret] = result.stdout.split('\n');
    assert.match(id ?? '', /^added endpoint ep_[0-9a-f]{32} for app1: http:\/\/127\.0\.0\.1:9\/hook$/);
    assert.match(
      secret ?? '',
      /^secret whsec_[A-Za-z0-9+/]{43}= \(shown once: the receiver verifies every delivery with it\)$/,
    );
    await cliJson(env, ['webhooks', 'remove', (id ?? '').split(' ')[2] as string]);
  });

  test('an unknown app is refused in one line, before its URL is looked at', async () => {
    refused(
      await run(env, ['webhooks', 'add', '--app', 'nope', '--url', 'https://nowhere.invalid/']),
      /^chessport: no app "nope" \(create it with: chessport apps add nope\)\n$/,
    );
  });
});

describe('webhooks: managing endpoints', () => {
  const PRIVATE = { WEBHOOK_ALLOW_PRIVATE: '1' };
  let id = '';
  let secret = '';

  before(async () => {
    const added = await cliJson<{ id: string; app: string; url: string; secret: string }>(
      { ...env, env: { ...env.env, ...PRIVATE } },
      ['webhooks', 'add', '--app', 'app1', '--url', 'http://127.0.0.1:9/in'],
    );
    ({ id, secret } = added);
    assert.deepEqual(added, { id, app: 'app1', url: 'http://127.0.0.1:9/in', secret });
  });

  test('list shows the endpoint, never its secret', async () => {
    const listed = await cliJson<Record<string, unknown>[]>(env, ['webhooks', 'list']);
    assert.deepEqual(listed, [
      {
        id,
        app: 'app1',
        url: 'http://127.0.0.1:9/in',
        events: 'all',
        state: 'enabled',
        disabledAt: null,
        disabledReason: null,
        failingSince: null,
        previousSecretUntil: null,
        createdAt: listed[0]?.createdAt,
      },
    ]);
    const human = await cliBothWays(env, ['webhooks', 'list']);
    assert.equal(human.stdout.split('\n')[0]?.replace(/\s+/g, ' '), 'ID APP URL EVENTS STATE');
    assert.ok(!human.stdout.includes(secret) && !JSON.stringify(listed).includes(secret));
    assert.deepEqual(await cliJson(env, ['webhooks', 'list', '--app', 'app1']), listed);
    refused(await cliBothWays(env, ['webhooks', 'list', '--app', 'nope']), /no app "nope"/);
  });

  test('rotate-secret prints a new secret once; the old one signs for 24 hours more', async () => {
    const rotated = await cliJson<{ id: string; secret: string; previousSecretUntil: string }>(env, [
      'webhooks',
      'rotate-secret',
      id,
    ]);
    assert.equal(rotated.id, id);
    assert.match(rotated.secret, /^whsec_/);
    assert.notEqual(rotated.secret, secret);
    const [listed] = await cliJson<{ previousSecretUntil: string }[]>(env, ['webhooks', 'list']);
    assert.equal(listed?.previousSecretUntil, rotated.previousSecretUntil);
    refused(
      await run(env, ['webhooks', 'rotate-secret', 'ep_nope']),
      /no webhook endpoint "ep_nope" \(chessport webhooks list shows them\)/,
    );
  });

  test('disable and enable, each saying when there was nothing to do', async () => {
    const disabled = await cliJson<{ state: string; disabledReason: string }>(env, [
      'webhooks',
      'disable',
      id,
    ]);
    assert.deepEqual([disabled.state, disabled.disabledReason], ['disabled', 'disabled by the operator']);
    assert.equal(
      (await run(env, ['webhooks', 'disable', id])).stdout,
      `endpoint ${id} is disabled already\n`,
    );
    assert.match((await run(env, ['webhooks', 'list'])).stdout, /disabled: disabled by the operator/);
    assert.equal((await run(env, ['webhooks', 'enable', id])).stdout, `enabled endpoint ${id}\n`);
    assert.equal((await run(env, ['webhooks', 'enable', id])).stdout, `endpoint ${id} is enabled already\n`);
    refused(await run(env, ['webhooks', 'enable', 'ep_nope']), /no webhook endpoint "ep_nope"/);
  });

  test('deliveries and retry: checked arguments, one-line errors', async () => {
    assert.deepEqual(await cliJson(env, ['webhooks', 'deliveries']), []);
    assert.deepEqual(await cliJson(env, ['webhooks', 'deliveries', id, '--failed']), []);
    refused(await run(env, ['webhooks', 'deliveries', 'ep_nope']), /no webhook endpoint "ep_nope"/);
    refused(
      await run(env, ['webhooks', 'deliveries', '--limit', '0']),
      /--limit must be a positive integer, got "0"/,
    );
    refused(
      await run(env, ['webhooks', 'deliveries', '--limit', '5000']),
      /--limit is at most 1000, got "5000"/,
    );
    refused(
      await run(env, ['webhooks', 'retry', 'msg_nope']),
      /no webhook delivery "msg_nope" \(chessport webhooks deliveries shows them\)/,
    );
  });

  test('remove takes the endpoint away; removing it again is refused', async () => {
    const removed = await cliJson<{ id: string }>(env, ['webhooks', 'remove', id]);
    assert.equal(removed.id, id);
    assert.deepEqual(await endpoints(), []);
    refused(await run(env, ['webhooks', 'remove', id]), /no webhook endpoint/);
  });
});
