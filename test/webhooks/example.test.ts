// The client kit's receiver (examples/webhook-receiver): run as a user runs it, against a real server, it
// verifies the deliveries with svix, refuses a forged one, and reads the feed that a delivery points to. The
// receiver is a child process, as a user runs it; the server runs in the test's process (serveInProcess).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cli, cliJson, issueToken, ROOT, tempEnv } from '../helpers/harness.ts';
import { serveInProcess } from '../helpers/in-process.ts';
import { addWebhookEndpoint } from '../helpers/webhook-receiver.ts';

const EXAMPLE = join(ROOT, 'examples/webhook-receiver/server.mjs');

/** A port free a moment ago: the endpoint's URL names it before the receiver listens there. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

test('examples/webhook-receiver verifies deliveries with svix and reads the feed they point to', async () => {
  const env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const port = await freePort();
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'app']);
  const token = await issueToken(env, 'alice', 'app', 'user.read,games.read');
  const url = `http://127.0.0.1:${port}/webhooks`;
  const { secret } = await addWebhookEndpoint(env, 'app', url);
  const server = await serveInProcess(env);
  const receiver = spawn(process.execPath, [EXAMPLE], {
    env: {
      ...process.env,
      WEBHOOK_SECRET: secret,
      PORT: String(port),
      CHESSPORT_URL: server.base,
      CHESSPORT_TOKEN: token,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const lines = () =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const waitFor = (what: string, check: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${what}: not within 20 s\n${stdout}\n${stderr}`)),
        20_000,
      );
      const poll = setInterval(() => {
        if (!check()) return;
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }, 50);
    });
  receiver.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  receiver.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    await waitFor('the receiver listens', () => lines().some((l) => 'listening' in l));
    const me = await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    const user = ((await me.json()) as { data: { id: string } }).data.id;
    const pgn = writePgn(env.dir, 'games.pgn', numberedGames('Example', 3));
    assert.equal((await cli(env, ['import', pgn, '--user', 'alice', '--database', 'Main'])).code, 0);
    await waitFor('the event and the feed read', () => lines().some((l) => l.read === 3));
    const [event] = lines().filter((l) => l.event);
    assert.deepEqual(
      { ...event, webhookId: undefined },
      { event: 'changes.available', user, webhookId: undefined },
    );
    assert.match(String(event?.webhookId), /^msg_/);

    // A forged delivery (signed with another secret) is refused.
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,bm90IGEgc2lnbmF0dXJlIG9mIHRoaXMgYm9keQ==',
      },
      body: JSON.stringify({
        type: 'changes.available',
        timestamp: new Date().toISOString(),
        data: { user },
      }),
    });
    assert.equal(forged.status, 400);
    await waitFor('the refusal', () => /refused a delivery/.test(stderr));
  } finally {
    receiver.kill();
    await server.stop();
    env.cleanup();
  }
});
