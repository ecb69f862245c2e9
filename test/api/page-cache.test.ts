// The page cache (src/api/page-cache.ts) may only ever save work: two servers on one store, one caching
// pages (the default) and one rendering every page (PAGE_CACHE_MB=0), must give the same bytes, Link and
// ETag for every list URL, before and after every kind of write the CLI makes on its own store connection.
// The servers and the CLI's commands run in the test's process (serveInProcess, cliJson), each on a store
// connection of its own, as separate processes have: the cache reads the version from the store.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type CachedPage, ListPositions, PageCache } from '../../src/api/page-cache.ts';
import { cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { bearer, header, raw, seed, writeGames } from '../helpers/production.ts';

const page = (version: number, bytes: number): CachedPage => ({
  version,
  body: Buffer.alloc(bytes),
  link: undefined,
  total: { count: 0 },
  tag: 'tag',
});

describe('PageCache', () => {
  test('serves a page only at the version it was rendered at', () => {
    const cache = new PageCache(1 << 20);
    cache.set('a', page(7, 100));
    assert.equal(cache.get('a', 7)?.version, 7);
    assert.equal(cache.get('a', 8), undefined, 'a newer version misses');
    assert.equal(cache.get('a', 7), undefined, 'and the stale page is gone');
    assert.equal(cache.bytes, 0);
  });

  test('keeps the newer page when a slower request stores an older one', () => {
    const cache = new PageCache(1 << 20);
    cache.set('a', page(9, 100));
    cache.set('a', page(8, 100));
    assert.equal(cache.get('a', 9)?.version, 9);
  });

  test('stays within its bytes, dropping the least recently used first', () => {
    const cache = new PageCache(3 * (1000 + 256 + 1));
    for (const key of ['a', 'b', 'c']) cache.set(key, page(1, 1000));
    assert.equal(cache.size, 3);
    cache.get('a', 1); // a is now the most recently used
    cache.set('d', page(1, 1000));
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((k) => cache.get(k, 1) !== undefined),
      [true, false, true, true],
    );
    assert.ok(cache.bytes <= cache.maxBytes);
    cache.set('huge', page(1, 10_000));
    assert.equal(cache.get('huge', 1), undefined, 'a page larger than the cache is not kept');
  });

  test('size 0 is off', () => {
    assert.equal(new PageCache(0).enabled, false);
  });
});

describe('ListPositions', () => {
  test('keeps at most its number of positions, dropping the least recently used first', () => {
    const positions = new ListPositions(2);
    positions.set('a', 1);
    positions.set('b', 2);
    assert.equal(positions.get('a'), 1); // a is now the most recently used
    positions.set('c', 3);
    assert.deepEqual([positions.get('a'), positions.get('b'), positions.get('c')], [1, undefined, 3]);
    assert.equal(positions.size, 2);
  });
});

describe('cached and uncached servers on one store', () => {
  let env: Env;
  let cached: InProcessServer;
  let uncached: InProcessServer;
  let alice: Record<string, string>;
  let mainSlug: string;

  before(async () => {
    env = tempEnv();
    const world = await seed(env, 7);
    mainSlug = world.databaseSlug;
    alice = bearer(world.tokens.alice);
    await cliJson(env, ['databases', 'add', 'Second', '--user', 'alice']);
    const file = writeGames(env.dir, 'second.pgn', 4, 'Second');
    await cliJson(env, ['import', file, '--user', 'alice', '--database', 'second']);
    cached = await serveInProcess(env);
    uncached = await serveInProcess(env, { PAGE_CACHE_MB: '0' });
  });
  after(async () => {
    await cached?.stop();
    await uncached?.stop();
    env?.cleanup();
  });

  const urls = () => [
    '/api/v1/games',
    '/api/v1/games?limit=3',
    '/api/v1/games?limit=3&offset=3',
    '/api/v1/games?offset=9&limit=3',
    // Where the pages above ended (offsets 3, 6 and 12): these seek to the positions they learned.
    '/api/v1/games?limit=4&offset=3',
    '/api/v1/games?limit=2&offset=6',
    '/api/v1/games?limit=1&offset=12',
    `/api/v1/databases/${mainSlug}/games?limit=2`,
    `/api/v1/databases/${mainSlug}/games?limit=2&offset=2`,
    `/api/v1/databases/${mainSlug}/games?limit=2&offset=4`,
    `/api/v1/databases/${mainSlug}/games?limit=2&offset=6`,
    '/api/v1/databases/second/games',
  ];

  async function assertSame(when: string): Promise<void> {
    for (const url of urls()) {
      // Twice from the caching server: the second answer comes from its cache.
      for (const round of [1, 2]) {
        const [mine, reference] = await Promise.all([
          raw(cached.base, url, { headers: alice }),
          raw(uncached.base, url, { headers: alice }),
        ]);
        const what = `${when}: ${url} (request ${round})`;
        assert.equal(mine.status, reference.status, what);
        assert.equal(mine.body.toString(), reference.body.toString(), what);
        for (const name of ['etag', 'link', 'x-total-count', 'content-type', 'content-length']) {
          assert.equal(header(mine, name), header(reference, name), `${what}: ${name}`);
        }
      }
    }
  }

  async function firstIds(): Promise<string[]> {
    const answer = await raw(cached.base, '/api/v1/games?limit=200', { headers: alice });
    return (JSON.parse(answer.body.toString()) as { data: { id: string }[] }).data.map((g) => g.id);
  }

  test('give the same answers before any write', async () => {
    await assertSame('at the start');
  });

  test('and after every kind of write, each made by the CLI on its own store connection', async () => {
    const ids = await firstIds();
    const update = writeGames(env.dir, 'update.pgn', 1, 'Updated');
    await cliJson(env, ['games', 'update', ids[1] as string, update]);
    await assertSame('after games update');
    await cliJson(env, ['games', 'move', ids[2] as string, '--database', 'second']);
    await assertSame('after games move');
    await cliJson(env, ['games', 'delete', ids[0] as string]);
    await assertSame('after games delete');
    const more = writeGames(env.dir, 'more.pgn', 3, 'More');
    await cliJson(env, ['import', more, '--user', 'alice', '--database', mainSlug]);
    await assertSame('after an import');
    await cliJson(env, ['databases', 'delete', 'second', '--user', 'alice']);
    await assertSame('after databases delete');
  });

  test('a cached page still answers 304 to its ETag, and 200 once the games changed', async () => {
    const url = '/api/v1/games?limit=3';
    const first = await raw(cached.base, url, { headers: alice });
    const again = await raw(cached.base, url, {
      headers: { ...alice, 'if-none-match': header(first, 'etag') },
    });
    assert.equal(again.status, 304);
    const ids = await firstIds();
    await cliJson(env, ['games', 'update', ids[0] as string, writeGames(env.dir, 'u2.pgn', 1, 'Again')]);
    const changed = await raw(cached.base, url, {
      headers: { ...alice, 'if-none-match': header(first, 'etag') },
    });
    assert.equal(changed.status, 200);
    assert.match(changed.body.toString(), /Again White 1/);
  });
});
