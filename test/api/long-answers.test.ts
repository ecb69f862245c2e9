// Long answers end with their token (src/api/long-answers.ts): a PGN export whose token is revoked or expires
// while it streams is cut off, as a broken transfer that a client library reports as an error; so is one that
// runs too long or whose client reads too slowly. A client that reads at a normal pace gets the whole export.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChessportClient, ChessportNetworkError } from '../../packages/client/src/index.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, importPgn, issueToken, tempEnv } from '../helpers/harness.ts';
import { type HeldExport, holdExport, seedLarge, writeRandomGames } from '../helpers/held-exports.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { bearer, raw, type Seeded, waitFor, writeGames } from '../helpers/production.ts';

const ALL = 'user.read,databases.read,games.read';

let env: Env;
let seeded: Seeded;
let exportOf: string;
/** The export's whole length, read by a client that reads at once. */
let wholeLength: number;
before(async () => {
  env = tempEnv();
  seeded = await seedLarge(env);
  exportOf = `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`;
});
after(() => env?.cleanup());

/**
 * The cuts for `reason` in the server's /metrics. The servers of this suite run in its process, one after the
 * other, and the counter is the process's (src/platform/metrics.ts): each test counts from its own start.
 */
async function cutsOf(server: InProcessServer, reason: string): Promise<number> {
  const text = (await raw(server.base, '/metrics')).body.toString();
  const line = new RegExp(`^chessport_streams_cut_total\\{reason="${reason}"\\} (\\d+)`, 'm');
  return Number(line.exec(text)?.[1] ?? 0);
}

const gamesIn = (body: Buffer) => body.toString().match(/^\[Event /gm)?.length ?? 0;

/** Imports `n` games into alice's exported database, each with `marker` in its names. */
async function importMore(n: number, marker: string): Promise<void> {
  const file = writeGames(env.dir, `${marker}.pgn`, n, marker);
  await cliJson(env, ['import', file, '--user', 'alice', '--database', 'Main']);
}

describe('a PGN export ends with its token', () => {
  let server: InProcessServer;
  before(async () => {
    server = await serveInProcess(env);
    const whole = await raw(server.base, exportOf, { headers: bearer(seeded.tokens.alice) });
    assert.equal(whole.status, 200);
    wholeLength = whole.body.length;
  });
  after(async () => server?.stop());

  test('revoked while its client reads: the next batch is not sent, and the client sees a broken transfer', async () => {
    const token = await issueToken(env, 'alice', 'app-one', ALL);
    const cutBefore = await cutsOf(server, 'token_revoked');
    const held = await holdExport(server.base, exportOf, token);
    assert.equal(held.status, 200);
    await held.read(3_000_000); // a few batches in
    const revoked = await cliInProcess(env, ['tokens', 'revoke', token]);
    assert.equal(revoked.code, 0, revoked.stderr);
    // Games imported after the revocation never reach the client: every batch is read after a check.
    await importMore(3, 'AfterRevocation');
    const { ended, body } = await held.finish();
    assert.equal(ended, 'error', 'cut off, not a complete answer');
    assert.ok(body.length < wholeLength, `${body.length} of ${wholeLength} bytes`);
    assert.ok(!body.toString().includes('AfterRevocation'));
    assert.ok(gamesIn(body) < 300);
    assert.equal(await cutsOf(server, 'token_revoked'), cutBefore + 1);
    // And the token is refused from then on, as always.
    assert.equal((await raw(server.base, exportOf, { headers: bearer(token) })).status, 401);
  });

  test('revoked while its client reads nothing: cut off without waiting for the next batch', async () => {
    const token = await issueToken(env, 'alice', 'app-one', ALL);
    const held = await holdExport(server.base, exportOf, token);
    const before = await cutsOf(server, 'token_revoked');
    await cliInProcess(env, ['tokens', 'revoke', token]);
    // The client reads nothing meanwhile: the server's timer finds the revocation.
    await waitFor('the export to be cut', async () => (await cutsOf(server, 'token_revoked')) > before);
    const { ended, body } = await held.finish();
    assert.equal(ended, 'error');
    assert.ok(body.length < wholeLength);
  });

  test('expiring while it streams: cut off at the expiry', async () => {
    const cutBefore = await cutsOf(server, 'token_expired');
    const token = await issueToken(env, 'alice', 'app-one', ALL, ['--expires-in', '3s']);
    const held = await holdExport(server.base, exportOf, token);
    assert.equal(held.status, 200);
    await held.read(500_000);
    await waitFor('the export to be cut', async () => (await cutsOf(server, 'token_expired')) > cutBefore);
    const { ended, body } = await held.finish();
    assert.equal(ended, 'error');
    assert.ok(body.length < wholeLength);
    const later = await raw(server.base, exportOf, { headers: bearer(token) });
    assert.equal(later.status, 401);
    assert.equal(JSON.parse(later.body.toString()).error_description, 'The access token has expired.');
  });

  test('compressed: the client library raises an error, never hands out a short file as whole', async () => {
    // Games that do not compress: the compressed export outgrows the buffers as the plain one does.
    const random = await importPgn(env, writeRandomGames(env.dir, 'random.pgn', 300), 'alice', 'Random');
    const token = await issueToken(env, 'alice', 'app-one', ALL);
    const client = new ChessportClient({ baseUrl: server.base, token });
    const stream = await client.databasePgnStream(random.slug);
    const reader = stream.getReader();
    let text = '';
    while (text.length < 1_000_000) {
      const { value, done } = await reader.read();
      assert.ok(!done);
      text += value;
    }
    await cliInProcess(env, ['tokens', 'revoke', token]);
    const failure = await (async () => {
      for (;;) {
        const { done } = await reader.read();
        if (done) return undefined;
      }
    })().catch((error: unknown) => error);
    assert.ok(failure instanceof ChessportNetworkError, `got ${String(failure)}`);
    assert.equal(failure.truncated, true);
    // The whole-text method retries the cut download once the connection broke, and is refused then.
    await assert.rejects(client.databasePgn(random.slug), /invalid or has been revoked/);
  });

  test('a client that reads at its own pace gets the whole export', async () => {
    const held = await holdExport(server.base, exportOf, seeded.tokens.alice);
    for (let i = 0; i < 5; i++) {
      await held.read(1_000_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const { ended, body } = await held.finish();
    assert.equal(ended, 'end');
    assert.equal(
      gamesIn(body),
      gamesIn((await raw(server.base, exportOf, { headers: bearer(seeded.tokens.alice) })).body),
    );
  });
});

describe('a PGN export cannot crawl', () => {
  test('STREAM_MAX_DURATION: an export that runs longer is cut off', async () => {
    const server = await serveInProcess(env, { STREAM_MAX_DURATION: '2s' });
    try {
      const cutBefore = await cutsOf(server, 'too_long');
      const held = await holdExport(server.base, exportOf, seeded.tokens.alice);
      await waitFor('the export to be cut', async () => (await cutsOf(server, 'too_long')) > cutBefore);
      assert.equal((await held.finish()).ended, 'error');
    } finally {
      await server.stop();
    }
  });

  test('STREAM_MIN_RATE: a client that takes less over a window is cut off; one that reads is not', async () => {
    const server = await serveInProcess(env, { STREAM_MIN_RATE: '1MB/s', STREAM_RATE_WINDOW: '2s' });
    let slow: HeldExport | undefined;
    try {
      const cutBefore = await cutsOf(server, 'too_slow');
      slow = await holdExport(server.base, exportOf, seeded.tokens.alice);
      const reader = slow;
      // A few KB every half second, as a slow-reading attacker would.
      const trickle = (async () => {
        while ((await cutsOf(server, 'too_slow')) === cutBefore) {
          await reader.read(4096);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      })();
      await waitFor('the slow export to be cut', async () => (await cutsOf(server, 'too_slow')) > cutBefore);
      await trickle;
      assert.equal((await slow.finish()).ended, 'error');
      // A client that reads at once is well above 1 MB/s.
      const fast = await raw(server.base, exportOf, { headers: bearer(seeded.tokens.alice) });
      assert.equal(fast.status, 200);
      assert.ok(fast.body.length >= wholeLength);
      assert.equal(await cutsOf(server, 'too_slow'), cutBefore + 1);
    } finally {
      slow?.leave();
      await server.stop();
    }
  });
});
