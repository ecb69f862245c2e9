// Webhooks end to end (docs/webhooks.md): the real server on a temp store, set up and changed through the CLI,
// delivering to real receivers that verify every signature with svix. Each kind of change is delivered for the
// right pairwise id; nobody hears of a user who did not grant their app games.read; a receiver that fails for
// a while gets the signal once it recovers; a server killed with SIGKILL delivers after its restart; a
// rotated secret verifies beside the new one; 410 Gone and long failure disable an endpoint; and without
// WEBHOOK_ALLOW_PRIVATE no delivery reaches a private address. The server and the CLI's commands run in the
// test's process (serveInProcess, cliInProcess); the server the two SIGKILL tests kill is a child process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  cliJson,
  type Env,
  http,
  issueToken,
  type Server,
  startServer,
  tempEnv,
} from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { queryStore } from '../helpers/stores.ts';
import { type AddedEndpoint, type Receiver, startReceiver, subscribe } from '../helpers/webhook-receiver.ts';

const ALL = 'user.read,databases.read,games.read';
/** What the issue asks of a single change: delivered within 2 s of its commit. */
const WITHIN_MS = 2000;
const FAST_RETRIES = { WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s' };

/** subscribe, checking that `webhooks add --json` prints the endpoint's id, app, URL and secret, no more. */
async function addEndpoint(env: Env, app: string, receiver: Receiver): Promise<AddedEndpoint> {
  const endpoint = await subscribe(env, app, receiver);
  assert.deepEqual(Object.keys(endpoint).sort(), ['app', 'id', 'secret', 'url']);
  return endpoint;
}

async function meId(base: string, token: string): Promise<string> {
  const me = await http<{ data: { id: string } }>(`${base}/api/v1`, '/me', { token });
  assert.equal(me.status, 200, me.text);
  return me.json.data.id;
}

/** Runs a command that changes games, then waits for the receiver's next verified 2xx delivery for `user`. */
async function changeAndAwait(
  env: Env,
  receiver: Receiver,
  user: string,
  args: string[],
  withinMs = WITHIN_MS,
): Promise<void> {
  const before = receiver.delivered().length;
  const result = await cliInProcess(env, args);
  assert.equal(result.code, 0, result.stderr);
  await receiver.waitFor(
    () =>
      receiver
        .delivered()
        .slice(before)
        .some((r) => r.event.data.user === user),
    withinMs,
    `a delivery for ${user} after \`chessport ${args.join(' ')}\``,
  );
}

/** The arguments of `chessport import` of `file` into the user's database "Main". */
const importIntoMain = (file: string, user = 'alice') => [
  'import',
  file,
  '--user',
  user,
  '--database',
  'Main',
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook deliveries', () => {
  let env: Env;
  /** In this process, but a child process for the tests that kill it (childServer). */
  let server: InProcessServer | Server;
  let appOne: Receiver;
  let appTwo: Receiver;
  let endpointOne: AddedEndpoint;
  const ids = { aliceOne: '', aliceTwo: '', bobTwo: '' };
  let aliceOne = '';
  let gameIds: string[] = [];

  before(async () => {
    env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1', ...FAST_RETRIES });
    for (const login of ['alice', 'bob']) await cliJson(env, ['users', 'add', login]);
    for (const app of ['app-one', 'app-two']) await cliJson(env, ['apps', 'add', app]);
    await cliJson(env, ['databases', 'add', 'Other', '--user', 'alice']);
    aliceOne = await issueToken(env, 'alice', 'app-one', ALL);
    // alice lets app-two read her profile only: app-two may not hear of her games.
    const aliceTwo = await issueToken(env, 'alice', 'app-two', 'user.read');
    const bobTwo = await issueToken(env, 'bob', 'app-two', ALL);
    appOne = await startReceiver();
    appTwo = await startReceiver();
    endpointOne = await addEndpoint(env, 'app-one', appOne);
    await addEndpoint(env, 'app-two', appTwo);
    server = await serveInProcess(env);
    ids.aliceOne = await meId(server.base, aliceOne);
    ids.aliceTwo = await meId(server.base, aliceTwo);
    ids.bobTwo = await meId(server.base, bobTwo);
  });
  after(async () => {
    await server?.stop();
    await appOne?.close();
    await appTwo?.close();
    env?.cleanup();
  });

  /** The server as a `chessport serve` child process, for a test that kills it with SIGKILL. */
  async function childServer(): Promise<Server> {
    if ('process' in server) return server;
    await server.stop();
    const child = await startServer(env);
    server = child;
    return child;
  }

  test('an import, an update, a move and a delete each give a verified delivery for the pairwise id, within 2 s', async () => {
    const pgn = writePgn(env.dir, 'first.pgn', numberedGames('First', 4));
    await changeAndAwait(env, appOne, ids.aliceOne, importIntoMain(pgn));
    const games = await http<{ data: { id: string }[] }>(`${server.base}/api/v1`, '/games', {
      token: aliceOne,
    });
    gameIds = games.json.data.map((g) => g.id);
    assert.equal(gameIds.length, 4);
    const update = writePgn(env.dir, 'update.pgn', numberedGames('Updated', 1));
    await changeAndAwait(env, appOne, ids.aliceOne, ['games', 'update', gameIds[0] as string, update]);
    await changeAndAwait(env, appOne, ids.aliceOne, [
      'games',
      'move',
      gameIds[1] as string,
      '--database',
      'Other',
    ]);
    await changeAndAwait(env, appOne, ids.aliceOne, ['games', 'delete', gameIds[2] as string]);

    for (const delivery of appOne.received) {
      assert.deepEqual(delivery.verifiedWith, [endpointOne.secret], 'svix verifies every delivery');
      assert.equal(delivery.event.type, 'changes.available');
      assert.deepEqual(Object.keys(delivery.event).sort(), ['data', 'timestamp', 'type']);
      assert.deepEqual(
        delivery.event.data,
        { user: ids.aliceOne },
        'the id /me gives app-one, nothing of the games',
      );
      assert.match(delivery.id, /^msg_[0-9a-f]{32}$/);
      assert.match(String(delivery.headers['user-agent']), /^chessport\/\S+ \(webhooks\)$/);
    }
    assert.deepEqual(appTwo.received, [], 'app-two hears nothing of alice, who did not grant it games.read');
  });

  test('two users, two apps: each app hears only of its own users, by its own pairwise id', async () => {
    const seenByOne = appOne.received.length;
    const pgn = writePgn(env.dir, 'bob.pgn', numberedGames('Bob', 2));
    await changeAndAwait(env, appTwo, ids.bobTwo, importIntoMain(pgn, 'bob'));
    assert.deepEqual(
      appTwo.received.map((r) => [r.event.data.user, r.verifiedWith.length]),
      [[ids.bobTwo, 1]],
    );
    assert.notEqual(ids.aliceTwo, ids.aliceOne, 'pairwise: another app, another id');
    await sleep(1500);
    assert.equal(appOne.received.length, seenByOne, 'app-one hears nothing of bob, who never granted it');
    assert.ok(!appTwo.received.some((r) => r.event.data.user === ids.aliceTwo));
    const metrics = await fetch(`${server.base}/metrics`).then((res) => res.text());
    assert.match(metrics, /^chessport_webhook_attempts_total\{outcome="delivered"\} [1-9]/m);
    assert.match(metrics, /^chessport_webhook_queue_depth\{queue="outbox"\} \d+$/m);
    assert.match(metrics, /^chessport_webhook_oldest_pending_seconds\{queue="deliveries"\} /m);
  });

  test('a receiver that answers 503 for a while gets the signal, under one message id, once it recovers', async () => {
    const first = appOne.received.length;
    appOne.answer((n) => (n < first + 3 ? 503 : 204));
    try {
      await changeAndAwait(env, appOne, ids.aliceOne, ['games', 'delete', gameIds[3] as string], 30_000);
    } finally {
      appOne.answer(204);
    }
    const attempts = appOne.received.slice(first);
    assert.deepEqual(
      attempts.map((r) => r.status),
      [503, 503, 503, 204],
    );
    assert.equal(new Set(attempts.map((r) => r.id)).size, 1, 'retries carry the same webhook-id');
    // The receiver has answered; the worker records the answer a moment later.
    let latest: { id: string; state: string; attempts: number; lastStatus: number } | undefined;
    await waitUntil(async () => {
      [latest] = await cliJson<NonNullable<typeof latest>[]>(env, [
        'webhooks',
        'deliveries',
        endpointOne.id,
        '--limit',
        '1',
      ]);
      return latest?.state !== 'pending' && latest?.state !== 'retrying';
    }, 10_000).catch(() => undefined);
    assert.deepEqual(
      { id: latest?.id, state: latest?.state, attempts: latest?.attempts, lastStatus: latest?.lastStatus },
      { id: attempts[0]?.id, state: 'delivered', attempts: 4, lastStatus: 204 },
    );
  });

  test('during a secret rotation each delivery verifies with the old secret and with the new one', async () => {
    const rotated = await cliJson<{ id: string; secret: string; previousSecretUntil: string }>(env, [
      'webhooks',
      'rotate-secret',
      endpointOne.id,
    ]);
    assert.notEqual(rotated.secret, endpointOne.secret);
    const hours = (Date.parse(rotated.previousSecretUntil) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, 'the old secret signs for 24 h more');
    appOne.setSecrets([rotated.secret, endpointOne.secret]);
    const before = appOne.received.length;
    const pgn = writePgn(env.dir, 'rotation.pgn', numberedGames('Rotation', 1));
    await changeAndAwait(env, appOne, ids.aliceOne, importIntoMain(pgn));
    const [delivery] = appOne.received.slice(before);
    assert.deepEqual(delivery?.verifiedWith, [rotated.secret, endpointOne.secret]);
    assert.equal(String(delivery?.headers['webhook-signature']).split(' ').length, 2);
    endpointOne.secret = rotated.secret;
    appOne.setSecrets([rotated.secret]);
  });

  test('a server killed with SIGKILL while signals are pending delivers them after its restart', async () => {
    const pgn = (name: string) => writePgn(env.dir, `${name}.pgn`, numberedGames(name, 1));
    const child = await childServer();
    // A delivery failing and waiting for its retry, then a change while no server runs: both pending.
    const first = appOne.received.length;
    appOne.answer(503);
    const failing = await cliInProcess(env, [
      'import',
      pgn('Killed1'),
      '--user',
      'alice',
      '--database',
      'Main',
    ]);
    assert.equal(failing.code, 0, failing.stderr);
    await appOne.waitFor((all) => all.length > first, 10_000, 'the first, failing attempt');
    await child.stop('SIGKILL');
    const whileDown = await cliInProcess(env, [
      'import',
      pgn('Killed2'),
      '--user',
      'alice',
      '--database',
      'Main',
    ]);
    assert.equal(whileDown.code, 0, whileDown.stderr);
    appOne.answer(204);
    const killedAt = Date.now();
    // A child again: the next test kills it too.
    server = await startServer(env);
    await appOne.waitFor(
      () => appOne.delivered().some((r) => r.at > killedAt && r.event.data.user === ids.aliceOne),
      30_000,
      'the pending signals after the restart',
    );
    await appOne.waitFor(() => appOne.received.every((r) => r.status !== 0), 1, 'no attempt left unanswered');
    // Nothing is left: the outbox is empty and no delivery is pending.
    await waitUntilQuiet(env);
  });

  test('a delivery cut off by SIGKILL mid-attempt is attempted again after the restart: at least once', async () => {
    const child = await childServer();
    const first = appOne.received.length;
    appOne.hold(true);
    const pgn = writePgn(env.dir, 'held.pgn', numberedGames('Held', 1));
    const changed = await cliInProcess(env, importIntoMain(pgn));
    assert.equal(changed.code, 0, changed.stderr);
    await appOne.waitFor((all) => all.length > first, 10_000, 'the attempt that will be cut off');
    const held = appOne.received[first];
    await child.stop('SIGKILL');
    appOne.hold(false);
    server = await serveInProcess(env);
    // The killed instance's lease runs out (the attempt's 10 s timeout and a margin), then it goes again.
    await appOne.waitFor(
      () => appOne.delivered().some((r) => r.id === held?.id),
      45_000,
      'the cut-off delivery, again',
    );
    await waitUntilQuiet(env);
  });

  test('410 Gone disables an endpoint at once; the others go on', async () => {
    const gone = await startReceiver();
    try {
      gone.answer(410);
      const endpoint = await addEndpoint(env, 'app-one', gone);
      const log = logOf(server);
      await changeAndAwait(
        env,
        appOne,
        ids.aliceOne,
        importIntoMain(writePgn(env.dir, 'gone.pgn', numberedGames('Gone', 1))),
      );
      await gone.waitFor((all) => all.length === 1, 10_000, 'the 410 answer');
      await waitUntil(async () => {
        const listed = await cliJson<{ id: string; state: string }[]>(env, ['webhooks', 'list']);
        return listed.find((e) => e.id === endpoint.id)?.state === 'disabled';
      }, 10_000);
      const [listed] = await cliJson<{ disabledReason: string }[]>(env, [
        'webhooks',
        'list',
        '--app',
        'app-one',
      ]).then((all) => all.filter((e) => (e as unknown as { id: string }).id === endpoint.id));
      assert.equal(listed?.disabledReason, 'the endpoint answered 410 Gone');
      // Logged right after the endpoint is disabled.
      await waitUntil(
        async () => /"msg":"webhook endpoint disabled: it answered 410 Gone"/.test(log()),
        10_000,
      );
      await changeAndAwait(
        env,
        appOne,
        ids.aliceOne,
        importIntoMain(writePgn(env.dir, 'gone2.pgn', numberedGames('Gone2', 1))),
      );
      assert.equal(gone.received.length, 1, 'a disabled endpoint gets nothing more');
      await cliJson(env, ['webhooks', 'remove', endpoint.id]);
    } finally {
      await gone.close();
    }
  });
});

describe('webhook endpoints that keep failing, and private addresses', () => {
  test('an endpoint failing for WEBHOOK_DISABLE_AFTER is disabled and logged; enabling it delivers what waited', async () => {
    const env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1', ...FAST_RETRIES, WEBHOOK_DISABLE_AFTER: '3s' });
    const receiver = await startReceiver();
    let server: InProcessServer | undefined;
    try {
      await cliJson(env, ['users', 'add', 'carol']);
      await cliJson(env, ['apps', 'add', 'app']);
      await issueToken(env, 'carol', 'app', 'games.read');
      const endpoint = await addEndpoint(env, 'app', receiver);
      receiver.answer(500);
      server = await serveInProcess(env);
      const log = logOf(server);
      const pgn = writePgn(env.dir, 'carol.pgn', numberedGames('Carol', 1));
      assert.equal(
        (await cliInProcess(env, ['import', pgn, '--user', 'carol', '--database', 'Main'])).code,
        0,
      );
      await waitUntil(async () => /every attempt failed for too long/.test(log()), 30_000);
      const [listed] = await cliJson<{ state: string; disabledReason: string }[]>(env, ['webhooks', 'list']);
      assert.equal(listed?.state, 'disabled');
      assert.match(listed?.disabledReason ?? '', /^every attempt failed since \d{4}-\d\d-\d\dT/);
      const failed = await cliJson<{ state: string; lastError: string }[]>(env, [
        'webhooks',
        'deliveries',
        '--failed',
      ]);
      assert.deepEqual(
        failed.map((d) => [d.state, d.lastError]),
        [['retrying', 'HTTP 500']],
        'its delivery waits',
      );
      const attempts = receiver.received.length;
      await sleep(1500);
      assert.equal(receiver.received.length, attempts, 'nothing goes to a disabled endpoint');
      receiver.answer(204);
      const enabled = await cliJson<{ state: string; failingSince: null }>(env, [
        'webhooks',
        'enable',
        endpoint.id,
      ]);
      assert.deepEqual([enabled.state, enabled.failingSince], ['enabled', null]);
      await receiver.waitFor(() => receiver.delivered().length === 1, 10_000, 'the delivery that waited');
    } finally {
      await server?.stop();
      await receiver.close();
      env.cleanup();
    }
  });

  test('without WEBHOOK_ALLOW_PRIVATE the server never delivers to a private address, whatever the store holds', async () => {
    // The endpoint was added where private addresses were allowed; this server is not told so.
    const env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1' });
    const receiver = await startReceiver();
    let server: InProcessServer | undefined;
    try {
      await cliJson(env, ['users', 'add', 'dave']);
      await cliJson(env, ['apps', 'add', 'app']);
      await issueToken(env, 'dave', 'app', 'games.read');
      await addEndpoint(env, 'app', receiver);
      server = await serveInProcess(env, { WEBHOOK_ALLOW_PRIVATE: '' });
      const pgn = writePgn(env.dir, 'dave.pgn', numberedGames('Dave', 1));
      assert.equal(
        (await cliInProcess(env, ['import', pgn, '--user', 'dave', '--database', 'Main'])).code,
        0,
      );
      let failed: { lastError: string | null; attempts: number }[] = [];
      await waitUntil(async () => {
        failed = await cliJson(env, ['webhooks', 'deliveries', '--failed']);
        return failed.length === 1;
      }, 10_000);
      assert.match(failed[0]?.lastError ?? '', /^the URL must be https, not http/);
      assert.equal(receiver.received.length, 0);
    } finally {
      await server?.stop();
      await receiver.close();
      env.cleanup();
    }
  });
});

/** What the server logs from now on. */
function logOf(server: Pick<Server, 'log'>): () => string {
  const from = server.log().length;
  return () => server.log().slice(from);
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Waits until the outbox is empty and no delivery is pending. */
async function waitUntilQuiet(env: Env): Promise<void> {
  await waitUntil(async () => {
    const [row] = await queryStore<{ signals: number; pending: number }>(
      env.databaseUrl,
      `select (select cast(count(*) as integer) from webhook_signals) as signals,
              (select cast(count(*) as integer) from webhook_deliveries where status = 'pending') as pending`,
    );
    return row?.signals === 0 && row.pending === 0;
  }, 20_000);
}
