// The take-over's writer thread (packages/sync/src/takeover-writer.ts), which parses the export's lines and
// writes the mirror while the run downloads: its failures are the sync's one-line error, with the mirror left
// without a cursor (the next run takes over again), and it ends on every path: a faulty line, an export that
// ends inside a line (which the client tells), an interruption mid-export, a thread that fails to start.
// Against a real server, through a proxy that spoils the export's answer.
// The syncs run in the test's process (cliInProcess, cliJson), the writer thread with them, and so does the
// server (serveInProcess): their subject is the one-line error and the mirror. Only the run interrupted by
// SIGINT mid-export is a child process (spawnSync: the signal and the exit code 130 are the subject).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SyncSummary } from '@chessport/sync';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  assertSameData,
  mirrorData,
  mirroredCount,
  mirrorState,
  serverData,
} from '../helpers/mirror-check.ts';
import {
  heldAfter,
  type RecordingProxy,
  recordingProxy,
  upstreamExport,
} from '../helpers/recording-proxy.ts';
import { spawnSync } from '../helpers/sync-processes.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';
import { TakeOverWriter } from '../helpers/workspace-sources.ts';

describe("the take-over's writer thread fails as the sync does, and ends with it", () => {
  let env: Env;
  let server: InProcessServer;
  let base: string;
  let token: string;
  let proxy: RecordingProxy;
  /** How the proxy spoils the NDJSON export's text (whole, or in parts as they come); none passes it on. */
  let spoil: ((text: string) => string | AsyncIterable<string>) | undefined;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000', STREAM_MIN_RATE: '0' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'alice', 'Main', writePgn(env.dir, 'main.pgn', numberedGames('Main', 1200)));
    token = await issue(env, 'alice');
    server = await serveInProcess(env);
    base = `${server.base}/api/v1`;
    proxy = await recordingProxy(server.base, async (req) => {
      if (!spoil || !req.url?.includes('format=ndjson')) return undefined;
      return upstreamExport(server.base, req, spoil);
    });
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
    env?.cleanup();
  });

  const syncVia = (through: string, out: string) =>
    cliInProcess(env, ['sync', '--base-url', through, '--token', token, '--out', out, '--limit', '100']);

  /** A first run that failed, then one without the proxy's spoiling: a new take-over, equal to the server. */
  async function failsThenTakesOver(out: string, message: RegExp): Promise<void> {
    const failed = await syncVia(proxy.base, out);
    assert.equal(failed.code, 1, failed.stderr);
    const lines = failed.stderr.trim().split('\n');
    assert.equal(lines.length, 1, failed.stderr);
    assert.match(lines[0] ?? '', message);
    assert.equal(mirrorState(out).cursor, undefined, 'no cursor: the take-over is not done');
    spoil = undefined;
    await takesOverAgain(out, 'after the failed take-over');
  }

  /** A run without the proxy's spoiling: a new take-over, not a resumed one, equal to the server. */
  async function takesOverAgain(out: string, after: string): Promise<void> {
    const again = await cliJson<SyncSummary>(env, [
      'sync',
      '--base-url',
      proxy.base,
      '--token',
      token,
      '--out',
      out,
    ]);
    assert.equal(again.resumed, false);
    assertSameData(mirrorData(out), await serverData(base, token), after);
  }

  test('a line of the export that is no JSON object is the one-line error that names it', async () => {
    spoil = (text) => {
      const lines = text.split('\n');
      lines[700] = 'this is not JSON';
      return lines.join('\n');
    };
    await failsThenTakesOver(
      join(env.dir, 'faulty'),
      /^chessport sync: line 701 of the export is not a JSON object: this is not JSON$/,
    );
  });

  test('an export that ends inside a line is the one-line error of an answer broken off', async () => {
    spoil = (text) => text.slice(0, text.lastIndexOf('\n', text.length - 2) + 30);
    await failsThenTakesOver(
      join(env.dir, 'cut'),
      /^chessport sync: GET \S+ failed after 1 attempt: the answer broke off \(the answer ended inside line 1200, without its line break\)\. The mirror keeps every page written so far; run again to continue$/,
    );
  });

  test('SIGINT mid-export ends the run and its thread: exit 130, and the next run takes over again', async () => {
    const out = join(env.dir, 'interrupted');
    // The proxy sends the first 300 lines of the export, and the rest only once the run has been interrupted:
    // the signal comes mid-export, however fast the run.
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    spoil = (text) => heldAfter(text, 300, released);
    const run = spawnSync(env, ['--base-url', proxy.base, '--token', token, '--out', out, '--limit', '20']);
    let finished = false;
    void run.exited.then(() => {
      finished = true;
    });
    while (!finished && mirroredCount(out) < 100) await new Promise((resolve) => setTimeout(resolve, 10));
    run.child.kill('SIGINT');
    const exit = await run.exited;
    release();
    spoil = undefined;
    assert.equal(exit.code, 130, `the sync was still running at 100 games: ${exit.stderr}`);
    assert.match(exit.stderr, /chessport sync: interrupted; /);
    assert.equal(mirrorState(out).cursor, undefined);
    await takesOverAgain(out, 'after the interrupted take-over');
  });

  test('a thread that fails fails the writes with its error, and ends', async () => {
    const failing = new URL(`data:text/javascript,${encodeURIComponent('throw new Error("no such disk")')}`);
    const writer = new TakeOverWriter(join(env.dir, 'none.sqlite'), failing);
    try {
      await assert.rejects(
        (async () => {
          for (let i = 0; i < 10; i++) await writer.write(['{}']);
          await writer.finish();
        })(),
        /no such disk/,
      );
    } finally {
      await writer.stop();
    }
  });
});
