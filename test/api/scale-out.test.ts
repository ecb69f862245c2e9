// Scale-out (issue 6): two instances of `chessport serve` on one PostgreSQL and one Redis behave as one service.
// The instances run in the test's process (serveInProcess), each with its own application, store connections
// and Redis connection, as two processes would have. A client that sends request i to instance i % 2 (a
// round-robin balancer) follows ONE feed, each cursor issued by one instance taken by the other, while CLI
// writer processes import, update, move and delete; its final view is what /games lists on either instance.
// And both count ONE rate limit: the budget runs down across the instances and the request after the limit is
// refused by both.
// Needs TEST_POSTGRES_URL and TEST_REDIS_URL; skips, saying why, without them (../helpers/scale-out.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import {
  byId,
  type Change,
  essentials,
  type FeedPage,
  runWriter,
  SEED_GAMES,
  seedRun,
  writerScripts,
} from '../helpers/changes-fixtures.ts';
import { cliJson, type Env, issueToken } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { postgresEnv, RoundRobin, scaleOutSkip, TEST_REDIS_URL } from '../helpers/scale-out.ts';

const RUNS = process.env.SCALE_OUT_RUNS ? Number(process.env.SCALE_OUT_RUNS) : 2;
const FOLLOW_LIMIT = 5;
const LIMIT = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('two instances on one PostgreSQL and one Redis', { skip: scaleOutSkip() }, () => {
  let env: Env;
  /** The pair the follower uses (a limit it never reaches), and a pair with a small limit. */
  let feedPair: InProcessServer[] = [];
  let limitPair: InProcessServer[] = [];
  const prefixes = [`chessport-test:${randomUUID()}:`, `chessport-test:${randomUUID()}:`];
  const tokens = { follower: '', alice: '', bob: '' };

  before(async () => {
    env = postgresEnv();
    const shared = (prefix: string, max: number) => ({
      REDIS_URL: TEST_REDIS_URL ?? '',
      REDIS_PREFIX: prefix,
      RATE_LIMIT_MAX: String(max),
    });
    // All four start at once on the empty database: one applies the migrations and creates the server secret,
    // the others wait for the migration lock and then read that secret, so a cursor of one is valid on all.
    const started = await Promise.all([
      serveInProcess(env, shared(prefixes[0] as string, 1_000_000)),
      serveInProcess(env, shared(prefixes[0] as string, 1_000_000)),
      serveInProcess(env, shared(prefixes[1] as string, LIMIT)),
      serveInProcess(env, shared(prefixes[1] as string, LIMIT)),
    ]);
    feedPair = started.slice(0, 2);
    limitPair = started.slice(2);
    for (const user of ['alice', 'bob']) await cliJson(env, ['users', 'add', user]);
    for (const app of ['follower', 'limited']) await cliJson(env, ['apps', 'add', app]);
    const issue = (user: string, app: string) => issueToken(env, user, app, 'games.read');
    tokens.follower = await issue('alice', 'follower');
    tokens.alice = await issue('alice', 'limited');
    tokens.bob = await issue('bob', 'limited');
  });

  after(async () => {
    for (const server of [...feedPair, ...limitPair]) await server.stop();
    env?.cleanup();
    if (TEST_REDIS_URL) {
      const redis = new Redis(TEST_REDIS_URL);
      for (const prefix of prefixes) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
      }
      await redis.quit();
    }
  });

  // ---- one feed ----------------------------------------------------------------------------------------

  /** Follows the feed through both instances in turn until the writers are done and a page ends it. */
  async function follow(client: RoundRobin, writersDone: () => boolean) {
    const view = new Map<string, Change>();
    let cursor: string | null = null;
    let lastTime = '';
    let crossings = 0;
    let lastInstance = -1;
    for (;;) {
      // Read the flag before asking: only a page requested after the last write committed may end the run.
      const done = writersDone();
      const query: string = cursor ? `limit=${FOLLOW_LIMIT}&cursor=${cursor}` : `limit=${FOLLOW_LIMIT}`;
      const page = await client.get<FeedPage>(`/changes?${query}`, tokens.follower);
      assert.equal(page.status, 200, `instance ${page.instance} takes the other's cursor: ${page.text}`);
      if (cursor && page.instance !== lastInstance) crossings++;
      lastInstance = page.instance;
      assert.equal(new Set(page.json.data.map((c) => c.id)).size, page.json.data.length, 'each game once');
      for (const change of page.json.data) {
        assert.ok(change.updatedAt >= lastTime, `updatedAt goes back: ${change.updatedAt} < ${lastTime}`);
        lastTime = change.updatedAt;
        view.set(change.id, change);
      }
      cursor = page.json.nextCursor;
      if (done && !page.json.hasMore) return { view, cursor, crossings };
      if (!page.json.hasMore) await sleep(25);
    }
  }

  /** Every live game of the follower's user, paged through one instance. */
  async function listedOn(server: InProcessServer): Promise<Change[]> {
    const client = new RoundRobin([server]);
    const all: Change[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = await client.get<{ data: Change[] }>(`/games?limit=200&offset=${offset}`, tokens.follower);
      assert.equal(page.status, 200, page.text);
      all.push(...page.json.data);
      if (page.json.data.length < 200) return all;
    }
  }

  test('a client alternating between them follows one feed and ends with what /games lists on both', async (t) => {
    for (let run = 1; run <= RUNS; run++) {
      const { a, b, c } = await seedRun(env, run);
      const seedPage = await new RoundRobin(feedPair).get<{ data: Change[] }>(
        `/databases/${a.id}/games?limit=200`,
        tokens.follower,
      );
      const seed = seedPage.json.data.map((g) => g.id);
      assert.equal(seed.length, SEED_GAMES);

      const client = new RoundRobin(feedPair);
      let writersDone = false;
      const following = follow(client, () => writersDone);
      const writes = await Promise.all(
        writerScripts(env.dir, run, seed, { a: a.slug, b: b.slug, c: c.slug }).map((commands) =>
          runWriter(env, commands),
        ),
      );
      writersDone = true;
      const { view, cursor, crossings } = await following;

      assert.ok(crossings > 0 && client.answered.every((n) => n > 0), 'both instances served the follower');
      const followed = [...view.values()]
        .filter((g) => !g.deleted)
        .map(essentials)
        .sort(byId);
      for (const [i, server] of feedPair.entries()) {
        const listed = (await listedOn(server)).map(essentials).sort(byId);
        assert.deepEqual(followed, listed, `run ${run}: the follower's view is what instance ${i} lists`);
        // Caught up on either instance: the same cursor gives an empty last page on both.
        const rest = await new RoundRobin([server]).get<FeedPage>(
          `/changes?cursor=${cursor}`,
          tokens.follower,
        );
        assert.equal(rest.status, 200);
        assert.deepEqual([rest.json.data, rest.json.hasMore, rest.json.nextCursor], [[], false, cursor]);
      }
      const tombstones = [...view.values()].filter((g) => g.deleted);
      assert.ok(tombstones.length > 0, 'deletes reached the follower');
      const both = new RoundRobin(feedPair);
      for (const gone of tombstones.slice(-2).flatMap((g) => [g, g])) {
        assert.equal((await both.get(`/games/${gone.id}`, tokens.follower)).status, 404);
      }
      t.diagnostic(
        `run ${run}/${RUNS}: ${writes.reduce((n, w) => n + w.ok, 0)} writes, ${view.size} games followed ` +
          `(${tombstones.length} tombstones), pages answered per instance ${client.answered.join('/')}`,
      );
    }
  });

  // ---- one rate limit ----------------------------------------------------------------------------------

  test('they count one rate limit: the budget runs down across both and both refuse after it', async () => {
    const client = new RoundRobin(limitPair);
    for (let i = 1; i <= LIMIT; i++) {
      const answer = await client.get('/games?limit=1', tokens.alice);
      assert.equal(answer.status, 200, `request ${i} (instance ${answer.instance})`);
      assert.equal(answer.headers.get('x-ratelimit-limit'), String(LIMIT));
      assert.equal(answer.headers.get('x-ratelimit-remaining'), String(LIMIT - i), `request ${i}`);
    }
    for (let i = 0; i < limitPair.length; i++) {
      const over = await client.get<{ error: string }>('/games?limit=1', tokens.alice);
      assert.equal(over.status, 429, `instance ${over.instance} refuses request ${LIMIT + 1 + i}`);
      assert.equal(over.json.error, 'rate_limited');
      assert.ok(Number(over.headers.get('retry-after')) >= 1);
    }
    assert.deepEqual(client.answered, [6, 6]);

    // At once through both: exactly the limit is granted, each remaining value once.
    const burst = new RoundRobin(limitPair);
    const answers = await Promise.all(
      Array.from({ length: 3 * LIMIT }, () => burst.get('/games?limit=1', tokens.bob)),
    );
    const granted = answers.filter((a) => a.status === 200);
    assert.equal(granted.length, LIMIT);
    assert.equal(answers.filter((a) => a.status === 429).length, 2 * LIMIT);
    const remaining = granted
      .map((a) => Number(a.headers.get('x-ratelimit-remaining')))
      .sort((x, y) => x - y);
    assert.deepEqual(
      remaining,
      Array.from({ length: LIMIT }, (_, i) => i),
    );
  });
});
