// docs/design.md 19: a follower polling the feed while several writer processes import, update, move and delete
// at the same time never misses a change. After the writers stop and the feed is drained, the follower's
// view (latest state per game, tombstones left out) is exactly what /games lists. Every run, on SQLite and
// (in the PostgreSQL pass) on PostgreSQL, where each CLI writer is its own process with its own connection.
// FEED_CONCURRENCY_RUNS repeats it more often (e.g. 50); test/store/feed-order.test.ts shows, step by step,
// the interleaving that a store without the guarantee gets wrong.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
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
import {
  cliJson,
  type Env,
  http,
  issueToken,
  type Server,
  startServer,
  tempEnv,
} from '../helpers/harness.ts';

const RUNS = process.env.FEED_CONCURRENCY_RUNS ? Number(process.env.FEED_CONCURRENCY_RUNS) : 3;
const FOLLOW_LIMIT = 7;

let env: Env;
let server: Server;
let base: string;
let token: string;

before(async () => {
  // The follower polls far faster than the default rate limit allows a client (docs/design.md 25).
  env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'follower']);
  token = await issueToken(env, 'alice', 'follower', 'games.read');
  server = await startServer(env);
  base = `${server.base}/api/v1`;
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function getJson<T>(path: string): Promise<T> {
  const res = await http<T>(base, path, { token });
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return res.json;
}

/** Follows the feed from the beginning until the writers are done and a page says hasMore: false. */
async function follow(writersDone: () => boolean) {
  const view = new Map<string, Change>();
  let cursor: string | null = null;
  let lastTime = '';
  let pagesWhileWriting = 0;
  for (;;) {
    // Read the flag before asking: only a page requested after the last write committed may end the run.
    const done = writersDone();
    const query: string = cursor ? `limit=${FOLLOW_LIMIT}&cursor=${cursor}` : `limit=${FOLLOW_LIMIT}`;
    const page: FeedPage = await getJson<FeedPage>(`/changes?${query}`);
    assert.equal(new Set(page.data.map((c) => c.id)).size, page.data.length, 'each game once per page');
    for (const change of page.data) {
      assert.ok(change.updatedAt >= lastTime, `updatedAt never goes back: ${change.updatedAt} < ${lastTime}`);
      lastTime = change.updatedAt;
      view.set(change.id, change);
    }
    cursor = page.nextCursor;
    if (!done) pagesWhileWriting++;
    if (done && !page.hasMore) return { view, pagesWhileWriting };
    if (!page.hasMore) await sleep(25);
  }
}

async function listedGames(): Promise<Change[]> {
  const all: Change[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await getJson<{ data: Change[] }>(`/games?limit=200&offset=${offset}`);
    all.push(...page.data);
    if (page.data.length < 200) return all;
  }
}

test('a follower racing four writer processes ends with exactly what /games lists, in every run', async (t) => {
  for (let run = 1; run <= RUNS; run++) {
    const { a, b, c } = await seedRun(env, run);
    const seed = (await getJson<{ data: Change[] }>(`/databases/${a.id}/games?limit=200`)).data.map(
      (g) => g.id,
    );
    assert.equal(seed.length, SEED_GAMES);

    let writersDone = false;
    const following = follow(() => writersDone);
    const tallies = await Promise.all(
      writerScripts(env.dir, run, seed, { a: a.slug, b: b.slug, c: c.slug }).map((commands) =>
        runWriter(env, commands),
      ),
    );
    writersDone = true;
    const { view, pagesWhileWriting } = await following;

    const followed = [...view.values()]
      .filter((g) => !g.deleted)
      .map(essentials)
      .sort(byId);
    const listed = (await listedGames()).map(essentials).sort(byId);
    assert.deepEqual(followed, listed, `run ${run}: the follower's view is what /games lists`);
    const tombstones = [...view.values()].filter((g) => g.deleted);
    assert.ok(tombstones.length > 0, 'deletes reached the follower');
    for (const gone of tombstones.slice(-3)) {
      assert.equal((await http(base, `/games/${gone.id}`, { token })).status, 404);
    }
    const ok = tallies.reduce((n, w) => n + w.ok, 0);
    const refused = tallies.reduce((n, w) => n + w.refused, 0);
    t.diagnostic(
      `${env.dialect} run ${run}/${RUNS}: ${ok} writes, ${refused} refused by races, ${view.size} games followed ` +
        `(${tombstones.length} tombstones), ${pagesWhileWriting} pages read while writing`,
    );
  }
});
