// `chessport sync` when the network fails, through the CLI: a closed port, and a gateway that starts cutting
// the answers mid-way through a run. The run says why in one line, without a stack or the token, exits 1,
// keeps the pages it wrote, and the next run finishes the mirror.
// The syncs run in the test's process (cliInProcess, cliJson), the gateway, the hostile server and the
// server (serveInProcess) beside them: their subject is the one line, the exit code and the mirror. No child
// process starts.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SyncSummary } from '@chessport/sync';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import { type CuttingGateway, cuttingGateway } from '../helpers/cutting-gateway.ts';
import { cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { assertSameData, mirrorData, mirroredCount, serverData } from '../helpers/mirror-check.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';

/** The one line a network failure prints: the request, the attempts, the cause, and what to do. */
const ONE_LINE =
  /^chessport sync: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/\S+ failed after 5 attempts: (.+)\. The mirror keeps every page written so far; run again to continue\n$/;

describe('chessport sync when the network fails', () => {
  let env: Env;
  let server: InProcessServer;
  let token: string;
  let gateway: CuttingGateway;
  let gatewayBase: string;
  /** Feed pages the gateway passes whole before it cuts every one; Infinity: it cuts nothing. */
  let wholePages = Number.POSITIVE_INFINITY;
  /** Whether the gateway cuts the NDJSON export. */
  let cutExport = false;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'alice', 'Main', writePgn(env.dir, 'main.pgn', numberedGames('Main', 12)));
    token = await issue(env, 'alice');
    server = await serveInProcess(env);
    // Feed pages pass whole until wholePages of them have; every one after is cut.
    gateway = await cuttingGateway(
      server.base,
      (req) =>
        (/^\/api\/v1\/changes\?/.test(req.url ?? '') && wholePages-- <= 0) ||
        (cutExport && (req.url ?? '').includes('format=ndjson')),
    );
    gatewayBase = gateway.base;
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
    env?.cleanup();
  });

  test('a closed port: one line naming the refused connection, exit 1, no stack, no token', async () => {
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const out = join(env.dir, 'closed');
    const run = await cliInProcess(env, [
      'sync',
      '--base-url',
      `http://127.0.0.1:${port}`,
      '--token',
      token,
      '--out',
      out,
    ]);
    assert.equal(run.code, 1, run.stderr);
    const [, cause] = ONE_LINE.exec(run.stderr) ?? [];
    assert.equal(cause, `connect ECONNREFUSED 127.0.0.1:${port}`, run.stderr);
    assert.ok(run.stderr.includes(`GET http://127.0.0.1:${port}/api/v1/me `), 'the first request, /me');
    assert.ok(!`${run.stdout}${run.stderr}`.includes(token), 'the token is not printed');
    assert.equal(mirroredCount(out), 0);
  });

  test('answers cut mid-way from the third page on: the run fails in one line and keeps two pages; the next run finishes', async () => {
    const out = join(env.dir, 'cut');
    const args = ['sync', '--base-url', gatewayBase, '--token', token, '--out', out, '--limit', '4'];
    // Through the feed from the start (--since a time before every game), not the export's take-over. Its
    // first request for changes is the check of --since (one change), then two whole pages.
    wholePages = 3;
    const first = await cliInProcess(env, [...args, '--since', '2000-01-01T00:00:00Z']).finally(() => {
      wholePages = Number.POSITIVE_INFINITY;
    });
    assert.equal(first.code, 1, first.stderr);
    const [, cause] = ONE_LINE.exec(first.stderr) ?? [];
    assert.match(cause ?? '', /^the answer broke off \(.+\)$/, first.stderr);
    assert.ok(!`${first.stdout}${first.stderr}`.includes(token));
    assert.equal(mirroredCount(out), 8, 'the two pages written before the cuts are kept');

    const second = await cliJson<SyncSummary>(env, args);
    assert.equal(second.resumed, true);
    assert.equal(second.gamesUpserted, 4, 'only the rest');
    assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, token), 'after the cuts');
  });

  test('an export cut mid-way: one line, exit 1, no cursor kept; the next run takes the games over again', async () => {
    const out = join(env.dir, 'cut-export');
    const args = ['sync', '--base-url', gatewayBase, '--token', token, '--out', out, '--limit', '4'];
    cutExport = true;
    const first = await cliInProcess(env, args).finally(() => {
      cutExport = false;
    });
    assert.equal(first.code, 1, first.stderr);
    assert.match(
      first.stderr,
      /^chessport sync: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/games\?format=ndjson failed after 1 attempt: the answer broke off \(.+\)\. The mirror keeps every page written so far; run again to continue\n$/,
    );
    assert.ok(!`${first.stdout}${first.stderr}`.includes(token));
    const second = await cliJson<SyncSummary>(env, args);
    assert.equal(second.resumed, false, 'no cursor: the take-over starts again');
    assert.equal(second.exportedGames, 12);
    assertSameData(mirrorData(out), await serverData(`${server.base}/api/v1`, token), 'after the cut export');
  });
});

describe('chessport sync against a hostile server', () => {
  test("the server's error description is printed with its control characters escaped", async () => {
    const env = tempEnv();
    // A server that answers every request 400 with terminal escape sequences in its description.
    const hostile = createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: 'invalid_request',
          error_description: 'bad \u001b]0;pwned\u0007 \u001b[2J\u009b31m',
        }),
      );
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      const run = await cliInProcess(env, [
        'sync',
        '--base-url',
        base,
        '--token',
        'cp_x',
        '--out',
        join(env.dir, 'm'),
      ]);
      assert.equal(run.code, 1, run.stderr);
      for (const c of ['\u001b', '\u0007', '\u009b'])
        assert.ok(!run.stderr.includes(c), 'no control character');
      assert.match(run.stderr, /bad \\u001b\]0;pwned\\u0007 \\u001b\[2J\\u009b31m/);
    } finally {
      hostile.close();
      env.cleanup();
    }
  });
});
