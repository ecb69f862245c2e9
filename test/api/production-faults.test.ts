// Faults and shutdown against the real server: a locked SQLite store or an unreachable PostgreSQL gives 503
// and service resumes when the store is back; SIGTERM lets a long PGN export finish, then the server exits 0.
// The servers run in the test's process (serveInProcess), stopped by stop() as a signal stops `chessport
// serve`; a child process stays for a signal during start-up, which serveInProcess does not return from.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { openSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { BIN, type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  bearer,
  captureOutput,
  header,
  type LogLine,
  logLines,
  outageSeen,
  raw,
  type Seeded,
  seed,
  waitFor,
} from '../helpers/production.ts';
import { queryPostgres, STORE_DIALECT } from '../helpers/stores.ts';
import { type TcpProxy, tcpProxy } from '../helpers/tcp-proxy.ts';

/** The answers while the store cannot answer: 503 unavailable with Retry-After, no driver detail. */
async function assertUnavailable(base: string, token: string, databaseSlug: string): Promise<void> {
  for (const path of ['/api/v1/games', '/api/v1/me', `/api/v1/databases/${databaseSlug}/games?format=pgn`]) {
    const answer = await raw(base, path, { headers: bearer(token) });
    assert.equal(answer.status, 503, path);
    assert.match(header(answer, 'content-type'), /^application\/json/);
    const body = JSON.parse(answer.body.toString()) as Record<string, string>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
    assert.equal(body.error, 'unavailable');
    assert.ok(
      !/at \w|\.ts:\d|SQLITE|ECONN|postgres/i.test(answer.body.toString()),
      'no stack trace, no driver detail',
    );
    assert.ok(Number(header(answer, 'retry-after')) >= 1);
  }
  assert.equal((await raw(base, '/readyz')).status, 503);
  assert.equal((await raw(base, '/healthz')).status, 200, 'the process itself is fine');
}

const STORE_OUTAGE = {
  down: 'store unavailable',
  more: 'failed requests',
  back: 'store available again',
  counted: 'requests failed',
};

/**
 * Breaks the store, sends waves of concurrent requests for a while (all 503), mends it, and checks the log:
 * one warning with the cause at once, then one line per interval (1 s) with the count of the others, and
 * one line when a request succeeds again, with how long it lasted and how many failed. Before, every
 * failed request wrote its own warning. Each request still has its access-log line.
 */
async function outageLoggedOnce(
  server: InProcessServer,
  token: string,
  store: { break(): Promise<void>; mend(): Promise<void>; code?: RegExp },
): Promise<void> {
  const output = captureOutput(server);
  const games = (id: string) =>
    raw(server.base, '/api/v1/games', { headers: { ...bearer(token), 'x-request-id': id } });
  await store.break();
  const started = Date.now();
  let firstAnswered = 0;
  let failed = 0;
  try {
    // Past two intervals, so that summaries are written while it lasts.
    for (let wave = 0; Date.now() - started < 2500; wave++) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => games(`outage-${wave}-${i}`)));
      firstAnswered ||= Date.now();
      for (const answer of answers) {
        assert.equal(answer.status, 503);
        assert.equal((JSON.parse(answer.body.toString()) as { error: string }).error, 'unavailable');
      }
      failed += answers.length;
    }
  } finally {
    await store.mend();
  }
  const mended = Date.now();
  assert.equal((await games('after-outage')).status, 200);
  const answered = Date.now();
  await waitFor('the store-available line', () => output.text().includes('store available again'));

  const lines = logLines(output.text());
  const seen = outageSeen(lines, STORE_OUTAGE);
  assert.match(String(seen.first.reqId), /^outage-0-/, 'the first line is the first failed request’s');
  assert.ok(typeof seen.first.reason === 'string' && seen.first.reason.length > 0, 'with the cause');
  if (store.code) assert.match(String(seen.first.code), store.code);
  assert.ok(seen.summaries.length >= 1, `${failed} failures over ${mended - started} ms: summarised`);
  assert.ok(seen.summaries.length <= Math.ceil((answered - started) / 1000) + 1, 'one summary per interval');
  const summarised = seen.summaries.reduce((a, b) => a + b, 0);
  assert.ok(1 + summarised <= failed, `1 + ${summarised} counted of ${failed}`);
  assert.equal(seen.back.count, failed, 'every failed request is counted in the end');
  assert.equal(seen.back.line.failed, failed);
  // From the first failure to the first success: on the same clock, between these bounds.
  assert.ok(seen.back.seconds >= (mended - firstAnswered) / 1000 - 0.1, `${seen.back.seconds} s`);
  assert.ok(seen.back.seconds <= (answered - started) / 1000 + 0.1, `${seen.back.seconds} s`);
  // PostgreSQL: the LISTEN connection that wakes long-polls says once that it is lost (docs/operations.md),
  // a line of its own beside the outage's.
  const listener = (line: LogLine) => String(line.msg).startsWith('change listener: connection lost');
  const warnings = lines.filter((line) => line.level >= 40 && !listener(line));
  assert.equal(warnings.length, 1 + seen.summaries.length, 'no warning per request');
  assert.ok(lines.filter(listener).length <= 1, 'the change listener’s loss, once at most');
  const accessLines = lines.filter(
    (line) => line.msg === 'request completed' && String(line.reqId).startsWith('outage-'),
  );
  assert.equal(accessLines.length, failed, 'each request still has its access-log line');
  assert.ok(accessLines.every((line) => (line.res as { statusCode: number }).statusCode === 503));
}

async function assertServing(server: InProcessServer, token: string, games: number): Promise<void> {
  const back = await raw(server.base, '/api/v1/games', { headers: bearer(token) });
  assert.equal(back.status, 200);
  assert.equal((JSON.parse(back.body.toString()) as { data: unknown[] }).data.length, games);
  assert.equal((await raw(server.base, '/readyz')).status, 200);
  assert.equal((await raw(server.base, '/healthz')).status, 200, 'still running');
}

describe('a locked store', {
  skip: STORE_DIALECT === 'sqlite' ? false : 'SQLite only: locks the SQLite file',
}, () => {
  let env: Env;
  let seeded: Seeded;
  let server: InProcessServer;
  const python = spawnSync('python3', ['-c', 'import fcntl'], { stdio: 'ignore' }).status === 0;

  before(async () => {
    env = tempEnv();
    seeded = await seed(env, 3);
    server = await serveInProcess(env, { STORE_BUSY_TIMEOUT_MS: '200' });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  /**
   * Puts the store in the state another process leaves it in while it recovers the WAL after a crash: the
   * shared-memory index is invalid and that process holds the recovery lock. Every reader then waits for
   * it and, past the busy timeout, fails with SQLITE_BUSY_RECOVERY. (In WAL mode a BEGIN EXCLUSIVE does
   * not block readers.) The lock is a POSIX byte-range lock on the -shm file, which Node cannot take.
   */
  async function holdRecoveryLock(databaseUrl: string): Promise<() => Promise<void>> {
    const holder: ChildProcess = spawn(
      'python3',
      [
        '-c',
        // Byte 120 + 2 of the -shm file is WAL_RECOVER_LOCK in SQLite's unix VFS.
        'import fcntl, os, sys\n' +
          'fd = os.open(sys.argv[1], os.O_RDWR)\n' +
          'fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 122, 0)\n' +
          'print("locked", flush=True)\n' +
          'sys.stdin.read()\n',
        `${databaseUrl}-shm`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    await new Promise((resolve, reject) => {
      holder.stdout?.once('data', resolve);
      holder.once('exit', (code) => reject(new Error(`lock holder exited (${code})`)));
    });
    const shm = openSync(`${databaseUrl}-shm`, 'r+');
    writeSync(shm, Buffer.alloc(48), 0, 48, 0); // the first copy of the WAL-index header
    return async () => {
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.stdin?.end();
      await exited;
    };
  }

  test('503 unavailable while another process holds the store, 200 again once it lets go', {
    skip: python ? false : 'needs python3 to take the POSIX lock a crashed-and-recovering process would hold',
  }, async () => {
    const alice = bearer(seeded.tokens.alice);
    assert.equal((await raw(server.base, '/api/v1/games', { headers: alice })).status, 200);
    const release = await holdRecoveryLock(env.databaseUrl);
    try {
      await assertUnavailable(server.base, seeded.tokens.alice, seeded.databaseSlug);
    } finally {
      await release();
    }
    await assertServing(server, seeded.tokens.alice, 3);
  });

  test('a locked store under load is logged as one outage, not a warning per failed request', {
    skip: python ? false : 'needs python3 to take the POSIX lock a crashed-and-recovering process would hold',
  }, async () => {
    // A server of its own: the outage of the test above ends in its log up to an interval later.
    const busy = await serveInProcess(env, { STORE_BUSY_TIMEOUT_MS: '5', OUTAGE_LOG_INTERVAL: '1s' });
    try {
      let release: (() => Promise<void>) | undefined;
      await outageLoggedOnce(busy, seeded.tokens.alice, {
        break: async () => {
          release = await holdRecoveryLock(env.databaseUrl);
        },
        mend: async () => release?.(),
        code: /^SQLITE_BUSY/,
      });
    } finally {
      await busy.stop();
    }
  });
});

describe('an unreachable PostgreSQL', {
  skip:
    STORE_DIALECT === 'postgres' ? false : 'PostgreSQL only: runs in the PostgreSQL pass (TEST_POSTGRES_URL)',
}, () => {
  let env: Env;
  let seeded: Seeded;
  let proxy: TcpProxy;
  let server: InProcessServer;

  before(async () => {
    env = tempEnv();
    seeded = await seed(env, 3);
    // The server reaches PostgreSQL only through a proxy that the test can cut and restore.
    const target = new URL(env.databaseUrl);
    proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(env.databaseUrl);
    proxied.host = `127.0.0.1:${proxy.port}`;
    server = await serveInProcess(env, { DATABASE_URL: proxied.toString() });
  });
  after(async () => {
    await server?.stop();
    await proxy?.close();
    env?.cleanup();
  });

  test('503 unavailable while PostgreSQL is cut off (open connections dropped, new ones refused), 200 again after', async () => {
    assert.equal(
      (await raw(server.base, '/api/v1/games', { headers: bearer(seeded.tokens.alice) })).status,
      200,
    );
    // Cut while requests are in flight: connections die mid-query, between queries and while idle.
    const inFlight = Array.from({ length: 30 }, (_, i) =>
      raw(
        server.base,
        i % 2 ? '/api/v1/games' : `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`,
        {
          headers: bearer(seeded.tokens.alice),
        },
      ),
    );
    await new Promise((r) => setTimeout(r, 5));
    await proxy.refuse();
    try {
      for (const answer of await Promise.all(inFlight)) assert.ok([200, 503].includes(answer.status));
      await assertUnavailable(server.base, seeded.tokens.alice, seeded.databaseSlug);
    } finally {
      await proxy.restore();
    }
    await assertServing(server, seeded.tokens.alice, 3);
  });

  test('a PostgreSQL that stops answering (connections hang): 503 after the connect timeout, not a hung request', {
    timeout: 120_000, // a request that hangs for good fails here
  }, async () => {
    await proxy.hang();
    try {
      // The proxy dropped the pool's open connections. Until the server has seen them end, a query may
      // still be sent on one and fail at once (a quick 503, also right); this test is about the new
      // connections, which hang.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      const answer = await raw(server.base, '/api/v1/games', { headers: bearer(seeded.tokens.alice) });
      assert.equal(answer.status, 503);
      assert.equal((JSON.parse(answer.body.toString()) as { error: string }).error, 'unavailable');
      // The proxy never answers: only the connect timeout (5 s) ends the wait, not an error at once.
      const waited = Date.now() - started;
      assert.ok(waited >= 4000, `answered after ${waited} ms (connect timeout 5 s)`);
    } finally {
      await proxy.restore();
    }
    await assertServing(server, seeded.tokens.alice, 3);
  });

  test('a games table locked by another session (a migration, VACUUM FULL): 503, no backend left waiting', async () => {
    // A server of its own, straight to PostgreSQL, with a short PG_ANSWER_TIMEOUT.
    const own = await serveInProcess(env, { PG_ANSWER_TIMEOUT: '1s', PG_POOL_MAX: '2' });
    const locker = new pg.Client(env.databaseUrl);
    try {
      const games = () => raw(own.base, '/api/v1/games', { headers: bearer(seeded.tokens.alice) });
      assert.equal((await games()).status, 200);
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table games in access exclusive mode');
      const answers = await Promise.all(Array.from({ length: 4 }, games));
      assert.deepEqual(
        answers.map((a) => a.status),
        [503, 503, 503, 503],
      );
      // The server dropped each connection whose query got no answer, but PostgreSQL went on waiting for
      // the lock in the backend behind it: one backend more per request, until max_connections ran out for
      // every client of that PostgreSQL. The server's own statement timeout now ends the wait first.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [waiting] = await queryPostgres<{ n: number }>(
        env.databaseUrl,
        "select cast(count(*) as integer) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      assert.equal(waiting?.n, 0, 'backends still waiting for the lock');
      await locker.query('rollback');
      await assertServing(own, seeded.tokens.alice, 3);
    } finally {
      await locker.end().catch(() => undefined);
      await own.stop();
    }
  });

  test('PostgreSQL cut off under load is logged as one outage, not a warning per failed request', async () => {
    // A proxy and a server of their own: the outages of the tests above end in the log an interval later.
    const target = new URL(env.databaseUrl);
    const own = await tcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(env.databaseUrl);
    proxied.host = `127.0.0.1:${own.port}`;
    const cut = await serveInProcess(env, { DATABASE_URL: proxied.toString(), OUTAGE_LOG_INTERVAL: '1s' });
    try {
      assert.equal(
        (await raw(cut.base, '/api/v1/games', { headers: bearer(seeded.tokens.alice) })).status,
        200,
      );
      await outageLoggedOnce(cut, seeded.tokens.alice, {
        break: () => own.refuse(),
        mend: () => own.restore(),
      });
    } finally {
      await cut.stop();
      await own.close();
    }
  });
});

describe('a PostgreSQL that vanishes without closing its connections', {
  skip:
    STORE_DIALECT === 'postgres' ? false : 'PostgreSQL only: runs in the PostgreSQL pass (TEST_POSTGRES_URL)',
}, () => {
  test('a query on a silent connection is 503 after PG_ANSWER_TIMEOUT, and new connections serve again', async () => {
    const env = tempEnv();
    const proxy = await tcpProxy(
      new URL(env.databaseUrl).hostname,
      Number(new URL(env.databaseUrl).port || 5432),
    );
    let server: InProcessServer | undefined;
    try {
      const seeded = await seed(env, 3);
      const proxied = new URL(env.databaseUrl);
      proxied.host = `127.0.0.1:${proxy.port}`;
      server = await serveInProcess(env, {
        DATABASE_URL: proxied.toString(),
        PG_ANSWER_TIMEOUT: '4s',
        PG_POOL_MAX: '2',
      });
      const base = server.base;
      const games = () => raw(base, '/api/v1/games', { headers: bearer(seeded.tokens.alice) });
      // Both pooled connections in use, then frozen: open, and silent for good.
      assert.deepEqual(
        (await Promise.all([games(), games()])).map((a) => a.status),
        [200, 200],
      );
      assert.equal((await raw(base, '/metrics')).status, 200); // sets the change sequence gauge
      await proxy.freeze();
      // Such a query waited for TCP to give up (about 15 minutes), holding its connection; the pool, full of
      // them, left the API at 503 for as long, although the new connections work.
      const started = Date.now();
      const answered: string[] = [];
      const both = Promise.all([games(), games()]).then((answers) => {
        answered.push('the queries');
        return answers;
      }); // on the two frozen connections
      const metrics = raw(base, '/metrics').then((answer) => {
        answered.push('/metrics');
        return answer;
      });
      let timer: NodeJS.Timeout | undefined;
      const answers = await Promise.race([
        both,
        new Promise<never>((_, reject) => {
          // TCP gives up after about 15 minutes; PG_ANSWER_TIMEOUT is 4 s.
          timer = setTimeout(
            () => reject(new Error('requests on silent connections still waiting after 60 s')),
            60_000,
          );
        }),
      ]);
      clearTimeout(timer);
      const waited = Date.now() - started;
      for (const answer of answers) {
        assert.equal(answer.status, 503);
        assert.equal((JSON.parse(answer.body.toString()) as { error: string }).error, 'unavailable');
      }
      assert.ok(waited >= 3500, `answered after ${waited} ms (PG_ANSWER_TIMEOUT 4 s)`);
      // A scrape waits for the store a second at most, keeping the gauge's last value: it took as long as a
      // query (PG_ANSWER_TIMEOUT, 30 s by default, past Prometheus's 10 s scrape timeout), and came after
      // the queries on the frozen connections, waiting for a connection of the pool they held.
      const scraped = await metrics;
      assert.equal(scraped.status, 200);
      assert.deepEqual(answered, ['/metrics', 'the queries'], 'the scrape did not wait for the store');
      assert.match(scraped.body.toString(), /^chessport_store_change_sequence [1-9]/m);
      await assertServing(server, seeded.tokens.alice, 3);
    } finally {
      await server?.stop();
      await proxy.close();
      env.cleanup();
    }
  });
});

describe('graceful shutdown', () => {
  const GAMES = 5000;
  let env: Env;
  let seeded: Seeded;

  before(async () => {
    env = tempEnv();
    // About 10 MB of PGN: more than the socket buffers of a reader that does not read take in, so the
    // export has to wait for the reader.
    seeded = await seed(env, GAMES, 'x'.repeat(2000));
  });
  after(() => env?.cleanup());

  test('SIGTERM during a slowly read PGN export: the export completes, then the server exits 0', async () => {
    const server = await serveInProcess(env);
    const output = captureOutput(server);
    let exitCode: Promise<number> | undefined;
    const url = new URL(`${server.base}/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          headers: bearer(seeded.tokens.alice),
        },
        (res) => {
          assert.equal(res.statusCode, 200);
          const chunks: Buffer[] = [];
          let signalled = false;
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            // Read slowly: a pause now and then keeps the export in flight for a while.
            if (!signalled) {
              signalled = true;
              exitCode = server.stop('SIGTERM', { graceful: true });
            }
            if (chunks.length % 100 === 1) {
              res.pause();
              setTimeout(() => res.resume(), 20);
            }
          });
          res.on('end', () => resolve(Buffer.concat(chunks).toString()));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const events = body.match(/^\[Event /gm)?.length ?? 0;
    assert.equal(events, GAMES, 'every game arrived');
    assert.ok(body.includes(`[Round "${GAMES}"]`));
    assert.ok(body.trimEnd().endsWith('1-0'), 'the last game is whole');
    assert.equal(await exitCode, 0);
    // The client keeps its connection alive; the server closes it once idle instead of waiting for it until
    // SHUTDOWN_TIMEOUT (30 s), whose end the log would say.
    assert.doesNotMatch(output.text(), /shutdown timeout/);
    assert.match(output.text(), /"msg":"stopped"/);
  });

  test('after SIGTERM no new connection is accepted, while the request in flight goes on', async () => {
    const server = await serveInProcess(env);
    let exited = false;
    let exitCode: Promise<number> | undefined;
    const url = new URL(`${server.base}/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`);
    let received = 0;
    const done = new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          headers: bearer(seeded.tokens.alice),
        },
        async (res) => {
          res.pause();
          exitCode = server.stop('SIGTERM', { graceful: true }).then((code) => {
            exited = true;
            return code;
          });
          // Probe until the listener is gone (a probe that still gets in came before the signal was handled),
          // then check that the server waits on for the export.
          const connectRefused = () =>
            raw(server.base, '/healthz', { agent: false }).then(
              () => false,
              (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
            );
          let refused = await connectRefused();
          for (let tries = 0; !refused && tries < 300; tries++) {
            await new Promise((r) => setTimeout(r, 100));
            refused = await connectRefused();
          }
          assert.ok(refused, 'the listener is closed');
          // Not exited: the export is still waiting for this reader.
          assert.equal(exited, false);
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
          });
          res.on('end', resolve);
          res.on('error', reject);
          res.resume();
        },
      );
      req.on('error', reject);
      req.end();
    });
    await done;
    assert.ok(received > 10_000_000);
    assert.equal(await exitCode, 0);
  });
});

describe('shutdown past SHUTDOWN_TIMEOUT', () => {
  test('a reader that never reads is cut at the timeout, logged as aborted, and the server exits 0', async () => {
    const env = tempEnv();
    try {
      const seeded = await seed(env, 3000, 'x'.repeat(2000)); // 6 MB: more than the socket buffers hold
      const server = await serveInProcess(env, { SHUTDOWN_TIMEOUT: '1s' });
      const output = captureOutput(server);
      const url = new URL(`${server.base}/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`);
      const id = `stalled-${Date.now()}`;
      const headers = { ...bearer(seeded.tokens.alice), 'x-request-id': id };
      const stopped = Promise.withResolvers<number>();
      let signalled = 0;
      const target = { host: url.hostname, port: url.port, path: url.pathname + url.search, headers };
      const req = request(target, (res) => {
        res.pause(); // and never resumed
        res.on('error', () => undefined); // cut by the server
        signalled = Date.now();
        server.stop('SIGTERM', { graceful: true }).then(stopped.resolve, stopped.reject);
      });
      req.on('error', () => undefined);
      req.end();
      assert.equal(await stopped.promise, 0);
      const waited = Date.now() - signalled;
      req.destroy();
      assert.ok(waited >= 900, `exited ${waited} ms after SIGTERM (SHUTDOWN_TIMEOUT 1s)`);
      // The cut export left no line at all: Fastify logs a request when its answer finishes.
      const lines = output
        .text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { reqId?: string; msg: string; aborted?: boolean; level: number });
      const logged = lines.filter((line) => line.reqId === id && line.msg.startsWith('request '));
      assert.equal(logged.length, 1, JSON.stringify(lines));
      assert.equal(logged[0]?.aborted, true);
      assert.equal(logged[0]?.level, 40);
      const messages = lines.map((line) => line.msg);
      assert.ok(
        messages.indexOf('shutdown timeout: closing the connections still open') <
          messages.indexOf('stopped'),
      );
    } finally {
      env.cleanup();
    }
  });
});

describe('an answer the client leaves half-way', () => {
  test('is counted in /metrics by method, route template and status, as it is logged', async () => {
    const env = tempEnv();
    try {
      const seeded = await seed(env, 3000, 'x'.repeat(2000)); // 6 MB: more than the socket buffers hold
      const server = await serveInProcess(env);
      const output = captureOutput(server);
      try {
        const path = `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`;
        const url = new URL(`${server.base}${path}`);
        const series =
          'chessport_http_requests_aborted_total{method="GET",route="/api/v1/databases/:id/games",status="200"}';
        const counted = (text: string) => text.split('\n').find((l) => l.startsWith(`${series} `));
        // The counter is the process's (src/platform/metrics.ts): the servers of this file before this one,
        // in the same process, may have counted such answers already.
        const before = Number(
          counted((await raw(server.base, '/metrics')).body.toString())?.slice(series.length + 1) ?? 0,
        );
        // The client reads the head and goes away: logged as aborted, but /metrics did not count it at all.
        await new Promise<void>((resolve, reject) => {
          const target = { host: url.hostname, port: url.port, path, headers: bearer(seeded.tokens.alice) };
          const req = request(target, (res) => {
            assert.equal(res.statusCode, 200);
            res.destroy();
            resolve();
          });
          req.on('error', reject);
          req.end();
        });
        await waitFor('the aborted line', () => output.text().includes('"aborted":true'));
        const text = (await raw(server.base, '/metrics')).body.toString();
        assert.equal(
          counted(text),
          `${series} ${before + 1}`,
          text
            .split('\n')
            .filter((l) => l.includes('aborted'))
            .join('\n'),
        );
        assert.match(text, /^# HELP chessport_http_requests_aborted_total /m);
        assert.ok(!text.includes(seeded.databaseSlug), 'no slug or id in the labels');
      } finally {
        await server.stop();
      }
    } finally {
      env.cleanup();
    }
  });
});

describe('shutdown of an idle server', () => {
  test('SIGINT exits 0 without waiting for an idle client, and says so in the log', async () => {
    const env = tempEnv();
    try {
      const server = await serveInProcess(env);
      const output = captureOutput(server);
      // A keep-alive connection left open by a client must not hold the shutdown up until SHUTDOWN_TIMEOUT
      // (30 s), whose end the log would say. (Graceful: stop() cuts no connection, as SIGINT cuts none.)
      await raw(server.base, '/healthz');
      assert.equal(await server.stop('SIGINT', { graceful: true }), 0);
      assert.doesNotMatch(output.text(), /shutdown timeout/);
      assert.match(output.text(), /"msg":"stopped"/);
    } finally {
      env.cleanup();
    }
  });
});

describe('a signal during start-up', () => {
  test('SIGTERM or SIGINT while serve waits for Redis: a clean stop, exit 0, start-up goes no further', async () => {
    // A child process: the signal reaches it before it listens, and the process's own handlers are the subject.
    // Redis's port, closed: serve logs 'redis unreachable' and waits up to 2 s for it before listening. The
    // signal handlers came after that wait, so a signal in it killed the process (exit 143 or 130). Now the
    // signal ends the wait: neither its end ('starting without redis') nor the listening comes after it.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const env = tempEnv();
    try {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
          env: { ...env.env, LOG_LEVEL: 'info', REDIS_URL: `redis://127.0.0.1:${port}` },
          cwd: env.dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
        let output = '';
        let log = ''; // stdout alone: the log's lines, whole
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          log += chunk.toString();
        });
        child.stderr.on('data', (chunk: Buffer) => {
          output += chunk.toString();
        });
        await waitFor('redis unreachable', () => output.includes('redis unreachable'));
        child.kill(signal);
        assert.equal(await exited, 0, `${signal}: ${output}`);
        assert.doesNotMatch(output, /listening at|starting without redis/i, signal);
        const messages = logLines(log).map((line) => line.msg);
        const shutdown = messages.findIndex((m) => m.startsWith('shutting down'));
        assert.ok(shutdown > messages.indexOf('redis unreachable'), `${signal}: ${messages.join(' | ')}`);
        assert.equal(messages.at(-1), 'stopped', signal);
      }
    } finally {
      env.cleanup();
    }
  });
});
