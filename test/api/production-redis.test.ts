// Shared rate limits through Redis: two servers count one limit exactly, and a Redis that hangs or dies does
// not take the API down (requests are counted locally until it is back). The servers run in the test's
// process (serveInProcess), each with its own app and Redis connection, as two instances have.
// The shared-limit suite runs where TEST_REDIS_URL is set (.ci/run sets it when a local Redis answers);
// the outage suite starts its own redis-server on a spare port and needs the binary.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { cliJson, type Env, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import {
  bearer,
  captureOutput,
  header,
  logLines,
  outageSeen,
  raw,
  type Seeded,
  seed,
  waitFor,
} from '../helpers/production.ts';
import { hasRedisServer, type OwnRedis, ownRedis } from '../helpers/redis-server.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;

describe('two servers on one Redis', {
  skip: REDIS_URL ? false : 'set TEST_REDIS_URL to run',
}, () => {
  let env: Env;
  let seeded: Seeded;
  let servers: InProcessServer[] = [];
  const prefix = `chessport-test:${randomUUID()}:`;

  before(async () => {
    env = tempEnv();
    seeded = await seed(env);
    const settings = { REDIS_URL, REDIS_PREFIX: prefix, RATE_LIMIT_MAX: '10' };
    servers = [await serveInProcess(env, settings), await serveInProcess(env, settings)];
  });
  after(async () => {
    for (const server of servers) await server.stop();
    env?.cleanup();
    if (REDIS_URL) {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });

  test('share one limit exactly: requests alternate between them and count down one budget', async () => {
    const alice = bearer(seeded.tokens.alice);
    for (let i = 1; i <= 10; i++) {
      const server = servers[i % 2] as InProcessServer;
      const answer = await raw(server.base, '/api/v1/me', { headers: alice });
      assert.equal(answer.status, 200, `request ${i}`);
      assert.equal(header(answer, 'x-ratelimit-remaining'), String(10 - i), `request ${i}`);
    }
    for (const server of servers) {
      const over = await raw(server.base, '/api/v1/me', { headers: alice });
      assert.equal(over.status, 429);
      assert.equal(JSON.parse(over.body.toString()).error, 'rate_limited');
      assert.ok(Number(header(over, 'retry-after')) >= 1);
    }
    // Other apps and users, and addresses without a valid token, are counted apart, also in Redis.
    const other = await raw(servers[0]?.base ?? '', '/api/v1/me', {
      headers: bearer(seeded.tokens.aliceOtherApp),
    });
    assert.equal(other.status, 200);
    assert.equal(header(other, 'x-ratelimit-remaining'), '9');
  });

  test('a cheap 304 through either server gives its count back in Redis, up to the limit per window; * never', async () => {
    await cliJson(env, ['apps', 'add', 'app-poller']);
    const poller = bearer(await issueToken(env, 'alice', 'app-poller', 'games.read'));
    const [one, two] = servers as [InProcessServer, InProcessServer];
    // The export's tag is a version stamp: had on either server without reading a game.
    const path = `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`;
    const first = await raw(one.base, path, { headers: poller });
    assert.equal(first.status, 200);
    assert.equal(header(first, 'x-ratelimit-remaining'), '9');
    const conditional = { ...poller, 'if-none-match': header(first, 'etag') };
    // 10 given back (the limit per window), then counted.
    for (let i = 0; i < 12; i++) {
      const again = await raw((i % 2 ? one : two).base, path, { headers: conditional });
      assert.equal(again.status, 304, `request ${i}`);
      const left = i < 10 ? 9 : 9 - (i - 9);
      assert.equal(header(again, 'x-ratelimit-remaining'), String(left), `request ${i}`);
      assert.match(header(again, 'ratelimit'), new RegExp(`;r=${left};`));
    }
    const starred = await raw(one.base, path, { headers: { ...poller, 'if-none-match': '*' } });
    assert.equal(starred.status, 304);
    assert.equal(header(starred, 'x-ratelimit-remaining'), '6');
    const spent = await raw(two.base, '/api/v1/changes', { headers: poller });
    assert.equal(header(spent, 'x-ratelimit-remaining'), '5', 'the counts left are shared by both servers');
  });

  test('many concurrent requests through both still grant exactly the limit', async () => {
    const bob = bearer(seeded.tokens.bob);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => raw(servers[i % 2]?.base ?? '', '/api/v1/me', { headers: bob })),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 10);
    assert.equal(answers.filter((a) => a.status === 429).length, 20);
    const remaining = answers
      .filter((a) => a.status === 200)
      .map((a) => Number(header(a, 'x-ratelimit-remaining')))
      .sort((a, b) => a - b);
    assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('Redis failing mid-run', { skip: hasRedisServer ? false : 'needs redis-server' }, () => {
  let env: Env;
  let seeded: Seeded;
  let server: InProcessServer;
  let redis: OwnRedis | undefined;
  const prefix = `chessport-test:${randomUUID()}:`;
  const sharedKeys = () => (redis as OwnRedis).keys(`${prefix}*`);

  before(async () => {
    redis = await ownRedis();
    env = tempEnv();
    seeded = await seed(env);
    server = await serveInProcess(env, {
      REDIS_URL: redis.url,
      REDIS_PREFIX: prefix,
      RATE_LIMIT_MAX: '1000',
      OUTAGE_LOG_INTERVAL: '1s',
    });
  });
  after(async () => {
    await server?.stop();
    await redis?.kill();
    env?.cleanup();
  });

  test('a hung, then dead Redis does not take the API down; counting is shared again once it is back', async () => {
    const output = captureOutput(server);
    const alice = bearer(seeded.tokens.alice);
    const games = () => raw(server.base, '/api/v1/games', { headers: alice });

    const healthy = await games();
    assert.equal(healthy.status, 200);
    // One bucket, named by the app and the user, never by the token.
    const keys = await sharedKeys();
    assert.equal(keys.length, 1);
    assert.match(keys[0] ?? '', /ratelimit:app:[0-9a-f-]{36}:user:[0-9a-f-]{36}$/);

    // Hung: the connection stays open but nothing answers. Requests are answered all the same, while Redis is
    // still stopped: none waits for it longer than the command timeout.
    redis?.signal('SIGSTOP');
    for (let i = 0; i < 3; i++) {
      const answer = await games();
      assert.equal(answer.status, 200);
      assert.equal(header(answer, 'x-ratelimit-limit'), '1000', 'still counted, locally');
    }
    redis?.signal('SIGCONT');

    // Dead: answered without it.
    await redis?.kill();
    for (let i = 0; i < 5; i++) {
      const answer = await games();
      assert.equal(answer.status, 200);
      assert.ok(Number(header(answer, 'x-ratelimit-remaining')) < 1000);
    }
    assert.equal((await raw(server.base, '/readyz')).status, 200, 'Redis is not needed to be ready');
    // Heavy requests take their slots in this process meanwhile.
    const exported = await raw(server.base, `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`, {
      headers: alice,
    });
    assert.equal(exported.status, 200);

    // Back: the server reconnects by itself and counts in Redis again.
    await redis?.start();
    await waitFor('shared counting to resume', async () => {
      await games();
      return (await sharedKeys()).length > 0;
    });
    // The outage ends in the log at the end of the interval (1 s) in which counting was shared again.
    await waitFor('the shared-counters-back line', () => output.text().includes('shared counters are back'));
    const text = output.text();
    assert.match(text, /redis unreachable|shared counters unreachable/);
    for (const token of Object.values(seeded.tokens))
      assert.ok(!text.includes(token), 'no token in the logs');
  });

  test('a hung Redis: after one request has waited for it, requests skip it for the cool-down, then one probes it', async () => {
    // A server of its own: the outage of the test above may still be open in the other one's breaker and log.
    const own = await serveInProcess(env, {
      REDIS_URL: (redis as OwnRedis).url,
      REDIS_PREFIX: prefix,
      RATE_LIMIT_MAX: '1000',
      OUTAGE_LOG_INTERVAL: '1s',
    });
    const output = captureOutput(own);
    const bob = bearer(seeded.tokens.bob);
    const me = async () => {
      const answer = await raw(own.base, '/api/v1/me', { headers: bob });
      assert.equal(answer.status, 200);
      return answer;
    };
    const metric = async (name: string) => {
      const text = (await raw(own.base, '/metrics')).body.toString();
      return new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1];
    };
    const breakerOpen = () => metric('chessport_rate_limit_breaker_open');
    // The requests that tried Redis and met its failure (or timeout): the others skipped it. The counter is
    // the process's (src/platform/metrics.ts), which the server of the test above added to: counted from here.
    const failedBefore = Number(await metric('chessport_rate_limit_store_errors_total'));
    const triedAndFailed = async () =>
      Number(await metric('chessport_rate_limit_store_errors_total')) - failedBefore;
    let counted = 0; // requests counted in this process while Redis is skipped
    try {
      await me();
      assert.equal(await breakerOpen(), '0');
      assert.equal(await triedAndFailed(), 0);

      redis?.signal('SIGSTOP');
      // The first request waits for the command timeout (0.5 s) and trips the breaker.
      await me();
      const trippedAt = Date.now();
      counted++;
      assert.equal(await triedAndFailed(), 1);
      // The next ones skip Redis: none tries it (before, each waited for it as long as the first).
      let remaining = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 20; i++) {
        const answer = await me();
        counted++;
        const left = Number(header(answer, 'x-ratelimit-remaining'));
        assert.ok(left < remaining, 'still counted, in this process');
        remaining = left;
      }
      assert.equal(await triedAndFailed(), 1, 'the requests in the cool-down skipped Redis');
      assert.equal(await breakerOpen(), '1');

      // After the cool-down (5 s) one request probes Redis (and meets its timeout again), the others do not.
      await new Promise((resolve) => setTimeout(resolve, 5000 - (Date.now() - trippedAt) + 300));
      const wave = await Promise.all(Array.from({ length: 10 }, () => me()));
      counted += wave.length;
      assert.equal(await triedAndFailed(), 2, 'one probe');
      const probedAt = Date.now();

      // Redis answers again: the next probe succeeds and counting is shared again.
      redis?.signal('SIGCONT');
      await new Promise((resolve) => setTimeout(resolve, 5000 - (Date.now() - probedAt) + 300));
      await me();
      assert.equal(await breakerOpen(), '0');
      await waitFor('the shared-counters-back line', () =>
        output.text().includes('shared counters are back'),
      );

      const seen = outageSeen(logLines(output.text()), {
        down: 'rate limits: shared counters unreachable, counting in this process',
        more: 'requests counted in this process',
        back: 'rate limits: shared counters are back',
        counted: 'requests counted in this process',
      });
      assert.equal(seen.first.reason, 'Command timed out', 'the cause');
      assert.ok(seen.summaries.length >= 1, 'summarised while it lasted');
      assert.ok(1 + seen.summaries.reduce((a, b) => a + b, 0) <= counted);
      assert.equal(seen.back.count, counted, 'every request counted in this process');
      assert.equal(
        logLines(output.text()).filter((line) => line.level >= 40).length,
        1 + seen.summaries.length,
        'no warning per request',
      );
    } finally {
      redis?.signal('SIGCONT');
      await own.stop();
    }
  });
});
