// Coalescing end to end: importing 100,000 games sends a handful of signals per endpoint and user, not one per
// game or per batch, and the last of them comes after the import's last change (docs/webhooks.md#coalescing).
// The server runs in the test's process (serveInProcess); the import is a `chessport import` child process, as
// an operator runs it, which leaves this process's event loop to the server and its webhook worker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cli, cliJson, issueToken, tempEnv } from '../helpers/harness.ts';
import { serveInProcess } from '../helpers/in-process.ts';
import { queryStore } from '../helpers/stores.ts';
import { startReceiver, subscribe } from '../helpers/webhook-receiver.ts';

const GAMES = 100_000;

test(`a ${GAMES.toLocaleString('en')}-game import gives at most 10 deliveries per endpoint and user`, {
  timeout: 600_000,
}, async (t) => {
  const env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const receivers = [await startReceiver(), await startReceiver()];
  const server = await serveInProcess(env).catch((error: unknown) => {
    env.cleanup();
    throw error;
  });
  try {
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'app']);
    await issueToken(env, 'alice', 'app', 'games.read');
    for (const receiver of receivers) await subscribe(env, 'app', receiver);
    const file = writePgn(env.dir, 'bulk.pgn', numberedGames('Bulk', GAMES));
    const started = Date.now();
    const imported = await cli(env, ['import', file, '--user', 'alice', '--database', 'Bulk', '--json']);
    const importedAt = Date.now();
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(
      (JSON.parse(imported.stdout) as { files: { imported: number }[] }).files[0]?.imported,
      GAMES,
    );
    const [last] = await queryStore<{ at: number }>(
      env.databaseUrl,
      'select max(updated_at) as at from games',
    );
    const lastChange = new Date(Number(last?.at)).toISOString();
    for (const receiver of receivers) {
      await receiver.waitFor(
        () => receiver.delivered().some((r) => r.event.timestamp >= lastChange),
        90_000,
        'a delivery that carries the last change',
      );
    }
    // Whatever was still to come after that one.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const receiver of receivers) {
      const delivered = receiver.delivered();
      // First, so that a run with too many says when they came (the import's length, its pauses).
      t.diagnostic(
        `${delivered.length} deliveries for ${GAMES} games over ${((Date.now() - started) / 1000).toFixed(0)} s ` +
          `(the import ${((importedAt - started) / 1000).toFixed(1)} s): ` +
          delivered.map((r) => `+${((r.at - started) / 1000).toFixed(1)} s`).join(', '),
      );
      assert.ok(delivered.length >= 1 && delivered.length <= 10, `${delivered.length} deliveries`);
      assert.equal(receiver.received.length, delivered.length, 'every one verified and answered 2xx');
      assert.equal(new Set(delivered.map((r) => r.event.data.user)).size, 1);
    }
  } finally {
    await server.stop();
    for (const receiver of receivers) await receiver.close();
    env.cleanup();
  }
});
