// Webhook events besides `changes.available` (docs/webhooks.md#events), end to end: the real server on a temp
// store, real receivers that verify every signature with svix. A `ping` asked for one endpoint arrives signed,
// carrying the asking user's pairwise id, whatever the endpoint subscribes to, and is listed as delivered with
// its latency, and may be redelivered; a disabled endpoint is refused one; an endpoint subscribed to
// `grant.revoked` only hears no changes; `--events` refuses what it does not know. The server runs in the test's
// process (serveInProcess).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cli, cliJson, type Env, http, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { type Receiver, startReceiver, subscribe } from '../helpers/webhook-receiver.ts';

const ALL = 'user.read,databases.read,games.read';
/** Generous: the machine is loaded; what is asserted is that it came, not how fast. */
const WAIT_MS = 20_000;

interface DeliveryJson {
  id: string;
  event: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastLatencyMs: number | null;
}

async function meId(base: string, token: string): Promise<string> {
  const me = await http<{ data: { id: string } }>(`${base}/api/v1`, '/me', { token });
  assert.equal(me.status, 200, me.text);
  return me.json.data.id;
}

describe('webhook events: ping and subscriptions', () => {
  let env: Env;
  let server: InProcessServer;
  let all: Receiver;
  let revokedOnly: Receiver;
  let endpointAll = '';
  let endpointRevokedOnly = '';
  let aliceId = '';

  before(async () => {
    env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'app-one']);
    await cliJson(env, ['databases', 'add', 'Main', '--user', 'alice']).catch(() => undefined);
    const token = await issueToken(env, 'alice', 'app-one', ALL);
    all = await startReceiver();
    revokedOnly = await startReceiver();
    endpointAll = (await subscribe(env, 'app-one', all)).id;
    const added = await cliJson<{ id: string; secret: string }>(env, [
      'webhooks',
      'add',
      '--app',
      'app-one',
      '--url',
      revokedOnly.url,
      '--events',
      'grant.revoked',
    ]);
    revokedOnly.setSecrets([added.secret]);
    endpointRevokedOnly = added.id;
    server = await serveInProcess(env);
    aliceId = await meId(server.base, token);
  });
  after(async () => {
    await server?.stop();
    await all?.close();
    await revokedOnly?.close();
    env?.cleanup();
  });

  test('webhooks list shows what each endpoint subscribes to', async () => {
    const listed = await cliJson<{ id: string; events: string | string[] }[]>(env, ['webhooks', 'list']);
    assert.deepEqual(
      listed.map((e) => [e.id, e.events]),
      [
        [endpointAll, 'all'],
        [endpointRevokedOnly, ['grant.revoked']],
      ],
    );
    const text = await cli(env, ['webhooks', 'list']);
    assert.match(text.stdout, /EVENTS/);
    assert.match(text.stdout, new RegExp(`${endpointRevokedOnly}\\s.*\\sgrant\\.revoked\\s`));
  });

  test('a ping goes to the one endpoint asked, signed, with the pairwise id of the user who asked', async () => {
    for (const [receiver, endpoint] of [
      [all, endpointAll],
      [revokedOnly, endpointRevokedOnly],
    ] as const) {
      const before = receiver.received.length;
      const ping = await cliJson<DeliveryJson>(env, ['webhooks', 'ping', endpoint, '--user', 'alice']);
      assert.equal(ping.event, 'ping');
      await receiver.waitFor(
        () => receiver.delivered().some((r) => r.id === ping.id),
        WAIT_MS,
        `the ping to ${endpoint}`,
      );
      const got = receiver.received.slice(before);
      assert.equal(got.length, 1, 'one request: the ping');
      const [delivery] = got;
      assert.equal(delivery?.event.type, 'ping');
      assert.deepEqual(delivery?.event.data, { user: aliceId }, 'the id /me gives app-one for alice');
      assert.ok(!Number.isNaN(Date.parse(delivery?.event.timestamp ?? '')));
      // Listed as delivered, with its status and latency, once the worker has recorded it.
      let listed: DeliveryJson | undefined;
      for (let i = 0; i < 200; i++) {
        listed = (await cliJson<DeliveryJson[]>(env, ['webhooks', 'deliveries', endpoint])).find(
          (d) => d.id === ping.id,
        );
        if (listed?.state === 'delivered') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(listed?.state, 'delivered');
      assert.equal(listed?.lastStatus, 204);
      assert.equal(listed?.attempts, 1);
      assert.equal(typeof listed?.lastLatencyMs, 'number');
    }
  });

  test('redelivering a ping sends it again under its message id', async () => {
    const [ping] = (await cliJson<DeliveryJson[]>(env, ['webhooks', 'deliveries', endpointAll])).filter(
      (d) => d.event === 'ping',
    );
    assert.ok(ping);
    const before = all.received.length;
    await cliJson(env, ['webhooks', 'retry', ping.id]);
    await all.waitFor((received) => received.length > before, WAIT_MS, 'the redelivered ping');
    assert.equal(all.received[before]?.id, ping.id);
    assert.equal(all.received[before]?.event.type, 'ping');
  });

  test('an endpoint subscribed to grant.revoked only hears no changes; the other does', async () => {
    const before = revokedOnly.received.length;
    const pgn = writePgn(env.dir, 'games.pgn', numberedGames('Sub', 2));
    const imported = await cli(env, ['import', pgn, '--user', 'alice', '--database', 'Main']);
    assert.equal(imported.code, 0, imported.stderr);
    await all.waitFor(
      () => all.delivered().some((r) => r.event.type === 'changes.available'),
      WAIT_MS,
      'the change',
    );
    // The change was fanned out (the other endpoint has it): nothing more can come for this one.
    const deliveries = await cliJson<DeliveryJson[]>(env, ['webhooks', 'deliveries', endpointRevokedOnly]);
    assert.deepEqual(
      deliveries.map((d) => d.event),
      ['ping'],
    );
    assert.equal(revokedOnly.received.length, before);
  });

  test('webhooks update changes the subscription; --events refuses what it does not know', async () => {
    const updated = await cliJson<{ events: string | string[] }>(env, [
      'webhooks',
      'update',
      endpointRevokedOnly,
      '--events',
      'grant.revoked, changes.available',
    ]);
    assert.deepEqual(updated.events, ['changes.available', 'grant.revoked']);
    const back = await cliJson<{ events: string | string[] }>(env, [
      'webhooks',
      'update',
      endpointRevokedOnly,
      '--events',
      'all',
    ]);
    assert.equal(back.events, 'all');
    for (const [events, message] of [
      ['ping', /cannot name ping/],
      ['changes', /unknown event "changes"/],
      ['grant.revoked,', /comma-separated/],
      ['', /comma-separated/],
    ] as const) {
      const refused = await cli(env, ['webhooks', 'update', endpointRevokedOnly, '--events', events]);
      assert.equal(refused.code, 1, `--events "${events}": ${refused.stderr}`);
      assert.match(refused.stderr, message);
    }
    // A disabled endpoint is refused a ping, and nothing is written; a user unknown too.
    await cliJson(env, ['webhooks', 'disable', endpointRevokedOnly]);
    const disabled = await cli(env, ['webhooks', 'ping', endpointRevokedOnly, '--user', 'alice']);
    assert.equal(disabled.code, 1);
    assert.match(disabled.stderr, /is disabled: enable it first/);
    await cliJson(env, ['webhooks', 'enable', endpointRevokedOnly]);
    const nobody = await cli(env, ['webhooks', 'ping', endpointRevokedOnly, '--user', 'nobody']);
    assert.equal(nobody.code, 1);
    const pings = (
      await cliJson<DeliveryJson[]>(env, ['webhooks', 'deliveries', endpointRevokedOnly])
    ).filter((d) => d.event === 'ping');
    assert.equal(pings.length, 1, 'only the first ping');
    const unknown = await cli(env, ['webhooks', 'ping', 'ep_nope', '--user', 'alice']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no webhook endpoint "ep_nope"/);
  });
});
