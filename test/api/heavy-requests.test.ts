// Concurrency limits for heavy requests (src/api/plugins/heavy-requests.ts): one app and user may hold only
// so many PGN exports at once, across every instance, and get them back when they leave; an instance runs
// only so many for everyone, and sheds them while overloaded; light requests are answered meanwhile.
// The suites on Redis run where TEST_REDIS_URL is set; those in which Redis restarts or fails start their
// own redis-server. The servers run in the test's process (serveInProcess), two instances as two servers there,
// each with its own application and Redis connection; two stay child processes of `chessport serve`: the one
// whose heap is measured (overloaded) and the one killed with SIGKILL. The feed's and heavy requests' metrics
// are the process's (src/platform/metrics.ts): in-process instances share them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  cliBothWays,
  cliJson,
  type Env,
  importPgn,
  issueToken,
  startServer,
  tempEnv,
} from '../helpers/harness.ts';
import { BIG_COMMENT, errorOf, type HeldExport, holdExport, seedLarge } from '../helpers/held-exports.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { metric, waitForChanges, waitingAtLeast, waitingAtMost } from '../helpers/long-poll.ts';
import { bearer, header, raw, type Seeded, waitFor, writeGames } from '../helpers/production.ts';
import { hasRedisServer, type OwnRedis, ownRedis } from '../helpers/redis-server.ts';
import { type TcpProxy, tcpProxy } from '../helpers/tcp-proxy.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;

let env: Env;
let seeded: Seeded;
/** carol: a third user. */
let carol: string;
/** alice's database of 30 MB, bob's of a few games. */
let exportOf: string;
let bobsExport: string;
before(async () => {
  env = tempEnv();
  seeded = await seedLarge(env);
  exportOf = `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`;
  await cliJson(env, ['users', 'add', 'carol']);
  carol = await issueToken(env, 'carol', 'app-one', 'user.read,databases.read,games.read');
  const bobs = writeGames(env.dir, 'bob.pgn', 3, 'Bob');
  bobsExport = exportPath(await importPgn(env, bobs, 'bob', 'Bobs'));
});

const exportPath = (database: { slug: string }) => `/api/v1/databases/${database.slug}/games?format=pgn`;
after(() => env?.cleanup());

/** Every held export let go, whatever a failing test left. */
const leaveAll = (held: HeldExport[]) => {
  for (const one of held) one.leave();
};

describe('PGN exports per app and user', () => {
  let server: InProcessServer;
  before(async () => {
    server = await serveInProcess(env);
  });
  after(async () => {
    await server?.stop();
  });

  test('past 2 at once the next is 429 naming the limit, while other users and light requests are answered', async () => {
    const held: HeldExport[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const one = await holdExport(server.base, exportOf, seeded.tokens.alice);
        assert.equal(one.status, 200);
        held.push(one);
      }
      const extra = await holdExport(server.base, exportOf, seeded.tokens.alice);
      assert.equal(extra.status, 429);
      assert.deepEqual(errorOf(extra), {
        error: 'rate_limited',
        error_description:
          'Too many exports (PGN or NDJSON) at once: at most 2 exports (PGN or NDJSON) at once per app and user. Retry when one of ' +
          'them has ended.',
      });
      assert.ok(Number(extra.headers['retry-after']) >= 1);
      // Per app and user, not per token: another token of the same app and user is refused alike.
      assert.equal((await holdExport(server.base, exportOf, seeded.tokens.aliceAgain)).status, 429);
      // Through the raw helper, which checks the answer against the OpenAPI document.
      const checked = await raw(server.base, exportOf, { headers: bearer(seeded.tokens.alice) });
      assert.equal(checked.status, 429);
      // Another app of the same user has its own slots.
      const otherApp = await holdExport(server.base, exportOf, seeded.tokens.aliceOtherApp);
      assert.equal(otherApp.status, 200);
      held.push(otherApp);
      // Light requests of everyone go on: the user's own, and another user's.
      for (const token of [seeded.tokens.alice, seeded.tokens.bob, carol]) {
        const me = await raw(server.base, '/api/v1/me', { headers: bearer(token) });
        assert.equal(me.status, 200);
      }
      // So does another user's own export, whole.
      const bobs = await raw(server.base, bobsExport, { headers: bearer(seeded.tokens.bob) });
      assert.equal(bobs.status, 200);
      // A HEAD reads no games and takes no slot.
      const head = await raw(server.base, exportOf, { method: 'HEAD', headers: bearer(seeded.tokens.alice) });
      assert.equal(head.status, 200);
      // Nor does an export the client has (If-None-Match: 304).
      const again = await raw(server.base, exportOf, {
        headers: { ...bearer(seeded.tokens.alice), 'if-none-match': header(head, 'etag') },
      });
      assert.equal(again.status, 304);
    } finally {
      leaveAll(held);
    }
  });

  test('a client that leaves mid-export gives its slot back', async () => {
    const held: HeldExport[] = [];
    try {
      for (let i = 0; i < 2; i++) held.push(await holdExport(server.base, exportOf, seeded.tokens.alice));
      assert.deepEqual(
        held.map((h) => h.status),
        [200, 200],
      );
      await held[0]?.read(100_000); // mid-export
      assert.equal((await holdExport(server.base, exportOf, seeded.tokens.alice)).status, 429);
      held[0]?.leave();
      let next: HeldExport | undefined;
      await waitFor('the slot to come back', async () => {
        next = await holdExport(server.base, exportOf, seeded.tokens.alice);
        if (next.status === 200) return true;
        assert.equal(next.status, 429);
        return false;
      });
      if (next) held.push(next);
      // An export read to its end gives its slot back too.
      const whole = await held[1]?.finish();
      assert.equal(whole?.ended, 'end');
      const after = await holdExport(server.base, exportOf, seeded.tokens.alice);
      held.push(after);
      await waitFor('the finished export’s slot', async () => {
        if (after.status === 200) return true;
        const retry = await holdExport(server.base, exportOf, seeded.tokens.alice);
        held.push(retry);
        return retry.status === 200;
      });
    } finally {
      leaveAll(held);
    }
  });
});

describe('PGN exports per instance, and load shedding', () => {
  test('an instance full of exports answers the next with 503, and light requests with 200', async () => {
    const server = await serveInProcess(env, { EXPORTS_PER_CLIENT: '1', EXPORTS_PER_INSTANCE: '2' });
    const held: HeldExport[] = [];
    try {
      const first = await holdExport(server.base, exportOf, seeded.tokens.alice);
      assert.equal(first.status, 200);
      held.push(first);
      // One client's limit is 1 here: its second is 429, which names 1 export.
      const second = await holdExport(server.base, exportOf, seeded.tokens.aliceAgain);
      assert.equal(second.status, 429);
      assert.match(
        errorOf(second).error_description,
        /: at most 1 export \(PGN or NDJSON\) at once per app and user\./,
      );
      const otherApp = await holdExport(server.base, exportOf, seeded.tokens.aliceOtherApp);
      assert.equal(otherApp.status, 200);
      held.push(otherApp);
      // The instance runs 2: bob's export, his first, is 503.
      const bobs = await holdExport(server.base, bobsExport, seeded.tokens.bob);
      assert.equal(bobs.status, 503);
      assert.deepEqual(errorOf(bobs), {
        error: 'unavailable',
        error_description:
          'The server is running as many exports (PGN or NDJSON) as it takes at once (2): retry in 5 s.',
      });
      assert.equal(bobs.headers['retry-after'], '5');
      assert.equal((await raw(server.base, bobsExport, { headers: bearer(seeded.tokens.bob) })).status, 503);
      assert.equal(
        (await raw(server.base, '/api/v1/me', { headers: bearer(seeded.tokens.bob) })).status,
        200,
      );
    } finally {
      leaveAll(held);
      await server.stop();
    }
  });

  test('an overloaded instance sheds exports with 503 and goes on answering light requests', async () => {
    // A heap of 100 MB, over 10 % full counts as overloaded: every instance is, from its first sample on.
    // A child process: the heap measured is the server's own, and NODE_OPTIONS acts only on a new process.
    const server = await startServer(env, {
      NODE_OPTIONS: '--max-old-space-size=100',
      SHED_HEAP_PERCENT: '10',
    });
    try {
      let shed: HeldExport | undefined;
      await waitFor('the first sample of the load', async () => {
        shed = await holdExport(server.base, bobsExport, seeded.tokens.bob);
        return shed.status === 503;
      });
      assert.match(
        errorOf(shed as HeldExport).error_description,
        /^The server is overloaded \(its heap is over 10 % full\) and refuses exports \(PGN or NDJSON\) for now: retry in 5 s\.$/,
      );
      assert.equal(
        (await raw(server.base, '/api/v1/me', { headers: bearer(seeded.tokens.bob) })).status,
        200,
      );
      const list = await raw(server.base, '/api/v1/games?limit=5', { headers: bearer(seeded.tokens.alice) });
      assert.equal(list.status, 200);
      const metrics = (await raw(server.base, '/metrics')).body.toString();
      assert.match(
        metrics,
        /^chessport_heavy_requests_refused_total\{kind="export",limit="pressure"\} [1-9]/m,
      );
    } finally {
      await server.stop();
    }
  });

  test('limits that cannot work stop serve at start, naming the setting', async () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ EXPORTS_PER_CLIENT: '0' }, /EXPORTS_PER_CLIENT must be a positive integer, got "0"/],
      [{ EXPORTS_PER_INSTANCE: 'many' }, /EXPORTS_PER_INSTANCE must be a positive integer/],
      [
        { EXPORTS_PER_CLIENT: '5', EXPORTS_PER_INSTANCE: '4' },
        /EXPORTS_PER_CLIENT \(5\) is more than EXPORTS_PER_INSTANCE \(4\)/,
      ],
      [{ HEAVY_LEASE_TTL: '1s' }, /HEAVY_LEASE_TTL is at least 3s/],
      [{ SHED_HEAP_PERCENT: '120' }, /SHED_HEAP_PERCENT is a percentage from 0 to 100/],
      [{ SHED_EVENT_LOOP_DELAY_MS: '-1' }, /SHED_EVENT_LOOP_DELAY_MS must be a whole number/],
      [{ STREAM_MIN_RATE: '4 kilobytes' }, /invalid STREAM_MIN_RATE "4 kilobytes": write it like 4KB\/s/],
      [{ STREAM_MAX_DURATION: '1 hour' }, /invalid STREAM_MAX_DURATION/],
      [{ STREAM_RATE_WINDOW: '0' }, /invalid STREAM_RATE_WINDOW/],
    ];
    for (const [i, [settings, message]] of cases.entries()) {
      // Refused before the store opens or anything listens: in this process; the first also as the real
      // binary, which must say the same.
      const run = i === 0 ? cliBothWays : cliInProcess;
      const result = await run({ ...env, env: { ...env.env, ...settings } }, ['serve', '--port', '0']);
      assert.equal(result.code, 1, JSON.stringify(settings));
      assert.match(result.stderr, message);
    }
  });
});

describe('PGN exports per app and user, across two instances on one Redis', {
  skip: REDIS_URL ? false : 'set TEST_REDIS_URL to run',
}, () => {
  const prefix = `chessport-test:${randomUUID()}:`;
  const settings = { REDIS_URL, REDIS_PREFIX: prefix, HEAVY_LEASE_TTL: '3s' };
  let servers: InProcessServer[] = [];
  before(async () => {
    servers = [await serveInProcess(env, settings), await serveInProcess(env, settings)];
  });
  after(async () => {
    for (const server of servers) await server.stop();
    if (REDIS_URL) {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });
  const base = (i: number) => (servers[i] as InProcessServer).base;
  /** The leases in Redis of every app and user. */
  async function leasesHeld(): Promise<number> {
    const redis = new Redis(REDIS_URL as string);
    try {
      let held = 0;
      for (const key of await redis.keys(`${prefix}heavy:*`)) held += await redis.zcard(key);
      return held;
    } finally {
      redis.disconnect();
    }
  }

  test('the limit holds across both, and a slot left on one is free on the other', async () => {
    const held: HeldExport[] = [];
    try {
      held.push(await holdExport(base(0), exportOf, seeded.tokens.alice));
      held.push(await holdExport(base(1), exportOf, seeded.tokens.alice));
      assert.deepEqual(
        held.map((h) => h.status),
        [200, 200],
      );
      for (const i of [0, 1]) {
        const extra = await holdExport(base(i), exportOf, seeded.tokens.aliceAgain);
        assert.equal(extra.status, 429, `instance ${i}`);
        assert.match(
          errorOf(extra).error_description,
          /at most 2 exports \(PGN or NDJSON\) at once per app and user/,
        );
      }
      // The slot left on one instance is free on the other.
      held.shift()?.leave();
      await waitFor('the slot left on instance 0 to be free on instance 1', async () => {
        const next = await holdExport(base(1), exportOf, seeded.tokens.alice);
        held.push(next);
        return next.status === 200;
      });
      // Many at once through both: none while both slots are held, exactly 2 once they are free.
      const refused = await Promise.all(
        Array.from({ length: 10 }, (_, i) => holdExport(base(i % 2), exportOf, seeded.tokens.alice)),
      );
      assert.deepEqual(new Set(refused.map((h) => h.status)), new Set([429]));
      leaveAll(held.splice(0));
      await waitFor('every slot to be given back', async () => (await leasesHeld()) === 0);
      const rush = await Promise.all(
        Array.from({ length: 10 }, (_, i) => holdExport(base(i % 2), exportOf, seeded.tokens.alice)),
      );
      held.push(...rush);
      assert.equal(rush.filter((h) => h.status === 200).length, 2);
      assert.equal(rush.filter((h) => h.status === 429).length, 8);
    } finally {
      leaveAll(held);
    }
  });

  test('the slots of an instance that dies expire with their leases', async () => {
    const large = writeGames(env.dir, 'bob-large.pgn', 300, 'Bob', BIG_COMMENT);
    const bobsLarge = exportPath(await importPgn(env, large, 'bob', 'Bob Large'));
    // A child process: it is killed.
    const doomed = await startServer(env, settings);
    const held: HeldExport[] = [];
    try {
      // bob holds both of his slots through the instance that will die.
      for (let i = 0; i < 2; i++) {
        const one = await holdExport(doomed.base, bobsLarge, seeded.tokens.bob);
        assert.equal(one.status, 200);
        held.push(one);
      }
      assert.equal((await holdExport(base(0), bobsLarge, seeded.tokens.bob)).status, 429);
      await doomed.stop('SIGKILL'); // no chance to give anything back
      let next: HeldExport | undefined;
      await waitFor('the dead instance’s leases to expire', async () => {
        next = await holdExport(base(0), bobsLarge, seeded.tokens.bob);
        held.push(next);
        return next.status === 200;
      });
    } finally {
      leaveAll(held);
      await doomed.stop();
    }
  });
});

describe('PGN exports on a slow Redis: a client refused by its limit holds none of the instance’s slots', {
  skip: REDIS_URL ? false : 'set TEST_REDIS_URL to run',
}, () => {
  const prefix = `chessport-test:${randomUUID()}:`;
  /** Between the servers and Redis: every answer of Redis comes SLOW_MS late. */
  let proxy: TcpProxy;
  const SLOW_MS = 150;
  /** alice's token in a third app: a third client that may export her database. */
  let aliceThirdApp: string;
  before(async () => {
    const target = new URL(REDIS_URL as string);
    proxy = await tcpProxy(target.hostname, Number(target.port || 6379));
    await cliJson(env, ['apps', 'add', 'app-three']);
    aliceThirdApp = await issueToken(env, 'alice', 'app-three', 'databases.read,games.read');
  });
  after(async () => {
    await proxy?.close();
    if (REDIS_URL) {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });
  // No load shedding: a machine loaded by other processes delays the event loop too, and what is tested here
  // is which of the limits refuses.
  const settings = () => ({
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    REDIS_PREFIX: prefix,
    SHED_EVENT_LOOP_DELAY_MS: '0',
  });
  async function leasesHeld(): Promise<number> {
    const redis = new Redis(REDIS_URL as string);
    try {
      let held = 0;
      for (const key of await redis.keys(`${prefix}heavy:*`)) held += await redis.zcard(key);
      return held;
    } finally {
      redis.disconnect();
    }
  }
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  test('a burst of 20 by one client never makes another user’s export 503, round after round', async () => {
    // Defaults: 2 exports per app and user, 8 per instance.
    const server = await serveInProcess(env, settings());
    const held: HeldExport[] = [];
    try {
      proxy.slow(SLOW_MS);
      for (let round = 1; round <= 5; round++) {
        const burst = Array.from({ length: 20 }, () =>
          holdExport(server.base, exportOf, seeded.tokens.alice),
        );
        // Bob's export comes while alice's are waiting for Redis's answers.
        await pause(SLOW_MS / 2);
        const bobs = await holdExport(server.base, bobsExport, seeded.tokens.bob);
        const alices = await Promise.all(burst);
        held.push(bobs, ...alices);
        const statuses = alices.map((one) => one.status).sort();
        const bobSaid = bobs.status === 200 ? '' : errorOf(bobs).error_description;
        assert.equal(
          bobs.status,
          200,
          `round ${round}: bob's export: ${bobSaid} (alice's: ${statuses.join(' ')})`,
        );
        assert.deepEqual(statuses, [...Array(2).fill(200), ...Array(18).fill(429)], `round ${round}`);
        assert.equal((await bobs.finish()).ended, 'end');
        leaveAll(held.splice(0));
        await waitFor('every slot to be given back', async () => (await leasesHeld()) === 0);
      }
    } finally {
      proxy.slow(0);
      leaveAll(held);
      await server.stop();
    }
  });

  test('clients whose leases come back together take no more of the instance’s slots than there are', async () => {
    const server = await serveInProcess(env, { ...settings(), EXPORTS_PER_INSTANCE: '3' });
    const held: HeldExport[] = [];
    try {
      proxy.slow(SLOW_MS);
      // 3 clients of 2 slots each: 6 leases for 3 slots of the instance.
      const tokens = [seeded.tokens.alice, seeded.tokens.aliceOtherApp, aliceThirdApp];
      const rush = await Promise.all(
        tokens.flatMap((token) => [0, 1].map(() => holdExport(server.base, exportOf, token))),
      );
      held.push(...rush);
      const statuses = rush.map((one) => one.status).sort();
      assert.deepEqual(statuses, [200, 200, 200, 503, 503, 503]);
      for (const refused of rush.filter((one) => one.status === 503)) {
        assert.equal(
          errorOf(refused).error_description,
          'The server is running as many exports (PGN or NDJSON) as it takes at once (3): retry in 5 s.',
        );
      }
      // The leases of the refused ones are given back: 3 are held.
      await waitFor('the refused requests’ leases to be given back', async () => (await leasesHeld()) === 3);
    } finally {
      proxy.slow(0);
      leaveAll(held);
      await server.stop();
    }
  });
});

/** A long-poll of carol's feed, which has no change: it waits until it is answered or cut off. */
function longPoll(base: string, token: string) {
  const waiting = waitForChanges(base, token, 'wait=60');
  return {
    request: waiting.request,
    /** Its status once answered, or `cut` when its connection closed without an answer. */
    outcome: waiting.answer.then(
      (answer) => answer.status,
      () => 'cut' as const,
    ),
  };
}
type LongPoll = ReturnType<typeof longPoll>;

/** The outcome of each long-poll that has one by now, and `waiting` for the others. */
async function outcomes(polls: LongPoll[]): Promise<(number | 'cut' | 'waiting')[]> {
  const pending = Symbol('pending');
  return Promise.all(
    polls.map(async (poll) => {
      const first = await Promise.race([
        poll.outcome,
        new Promise((resolve) => setImmediate(resolve, pending)),
      ]);
      return first === pending ? 'waiting' : (first as number | 'cut');
    }),
  );
}

describe('long-polls per app and user when Redis restarts empty or comes back', {
  skip: hasRedisServer ? false : 'needs redis-server',
}, () => {
  const LIMIT = 4; // LONG_POLLS_PER_CLIENT's default
  let redis: OwnRedis;
  let polls: LongPoll[] = [];
  let servers: InProcessServer[] = [];
  before(async () => {
    redis = await ownRedis();
  });
  after(async () => {
    await redis?.kill();
  });
  /** A server on the own Redis (or on `url`), with its own prefix; leases renewed every second. */
  async function serverOn(prefix: string, url = redis.url): Promise<InProcessServer> {
    const server = await serveInProcess(env, {
      REDIS_URL: url,
      REDIS_PREFIX: prefix,
      HEAVY_LEASE_TTL: '3s',
      SHED_EVENT_LOOP_DELAY_MS: '0',
    });
    servers.push(server);
    return server;
  }
  async function leasesHeld(prefix: string): Promise<number> {
    const client = new Redis(redis.url);
    try {
      let held = 0;
      for (const key of await client.keys(`${prefix}heavy:long-poll:*`)) held += await client.zcard(key);
      return held;
    } finally {
      client.disconnect();
    }
  }
  /** Until the server counts its requests in Redis again. */
  async function sharedAgain(server: InProcessServer, prefix: string): Promise<void> {
    await waitFor('the server to count in Redis again', async () => {
      await raw(server.base, '/api/v1/me', { headers: bearer(carol) });
      return (await redis.keys(`${prefix}ratelimit:*`)).length > 0;
    });
  }
  const start = (server: InProcessServer, n: number) => {
    const started = Array.from({ length: n }, () => longPoll(server.base, carol));
    polls.push(...started);
    return started;
  };
  const endAll = async () => {
    for (const poll of polls) poll.request.destroy();
    polls = [];
    // The count of waiting requests is the process's: the next test starts from none.
    if (servers[0]) await waitingAtMost(servers[0].base, 0);
    for (const server of servers) await server.stop();
    servers = [];
  };

  test('the long-polls running when Redis restarted empty still count: 4 more of the client are 429', async () => {
    const prefix = `chessport-test:${randomUUID()}:`;
    try {
      const server = await serverOn(prefix);
      const old = start(server, LIMIT);
      await waitingAtLeast(server.base, LIMIT);
      assert.equal(await leasesHeld(prefix), LIMIT);
      await redis.kill();
      await redis.start(); // empty
      await sharedAgain(server, prefix);
      const more = start(server, LIMIT);
      assert.deepEqual(await Promise.all(more.map((poll) => poll.outcome)), Array(LIMIT).fill(429));
      assert.deepEqual(await outcomes(old), Array(LIMIT).fill('waiting'));
      // Their leases are back in Redis, where the other instances see them.
      await waitFor('the leases to be taken again', async () => (await leasesHeld(prefix)) === LIMIT);
    } finally {
      await endAll();
    }
  });

  test('across instances: those let in while Redis had lost the leases are cut off, the older ones go on', async () => {
    const prefix = `chessport-test:${randomUUID()}:`;
    // The first instance reaches Redis through a proxy, to lose it for a while.
    const proxy = await tcpProxy('127.0.0.1', redis.port);
    try {
      const first = await serverOn(prefix, `redis://127.0.0.1:${proxy.port}`);
      const second = await serverOn(prefix);
      // The process's count (the instances share it): the cuts of this test are what it adds.
      const cutBefore = await metric(second.base, 'chessport_heavy_requests_cut_total', 'kind="long-poll"');
      const old = start(first, LIMIT);
      await waitingAtLeast(first.base, LIMIT);
      assert.equal(await leasesHeld(prefix), LIMIT);
      // Redis restarts empty while the first instance cannot reach it to take its leases again.
      await proxy.hang();
      await redis.kill();
      await redis.start();
      await sharedAgain(second, prefix);
      const newer = start(second, LIMIT);
      // Waiting: the first instance's LIMIT and the second's (the count is the process's).
      await waitingAtLeast(second.base, 2 * LIMIT);
      assert.equal(await leasesHeld(prefix), LIMIT, 'let in: Redis knew of none');
      // The first instance reaches Redis again: its leases come back in their places, before the newer ones,
      // which are cut off at their next renewal.
      await proxy.restore();
      await waitFor('the newer long-polls to be cut off', async () =>
        (await outcomes(newer)).every((outcome) => outcome === 'cut'),
      );
      assert.deepEqual(await outcomes(old), Array(LIMIT).fill('waiting'));
      assert.equal(await leasesHeld(prefix), LIMIT);
      assert.equal(
        (await metric(second.base, 'chessport_heavy_requests_cut_total', 'kind="long-poll"')) - cutBefore,
        LIMIT,
      );
      const extra = start(second, 1);
      assert.deepEqual(await Promise.all(extra.map((poll) => poll.outcome)), [429]);
    } finally {
      await endAll();
      await proxy.close();
    }
  });

  test('long-polls held in each instance while Redis was down move into it when it is back, and the cap holds', async () => {
    const prefix = `chessport-test:${randomUUID()}:`;
    try {
      const first = await serverOn(prefix);
      const second = await serverOn(prefix);
      await redis.kill();
      // Each instance holds slots of its own meanwhile, up to the limit: 2 here, then 4 there.
      const early = start(first, 2);
      await waitingAtLeast(first.base, 2);
      const late = start(second, LIMIT);
      // Waiting: the first instance's 2 and the second's LIMIT (the count is the process's).
      await waitingAtLeast(second.base, 2 + LIMIT);
      await redis.start();
      // Moved in by when they started: the first instance's 2 and 2 of the second's are kept, the 2 newest
      // are cut off.
      await waitFor('the newest long-polls beyond the limit to be cut off', async () => {
        const seen = await outcomes(late);
        return seen.filter((outcome) => outcome === 'cut').length === 2;
      });
      assert.deepEqual(await outcomes(early), ['waiting', 'waiting']);
      assert.deepEqual((await outcomes(late)).sort(), ['cut', 'cut', 'waiting', 'waiting']);
      await waitFor('the leases kept to be in Redis', async () => (await leasesHeld(prefix)) === LIMIT);
      const extra = start(first, 1);
      assert.deepEqual(await Promise.all(extra.map((poll) => poll.outcome)), [429]);
    } finally {
      await endAll();
    }
  });
});
