// Leases in Redis (src/platform/leases.ts) when Redis holds more of a key than its limit: after it lost leases (a
// restart), or once it learns of those an instance held during its outage. A lease renewed is added again in
// its place, and the newest beyond the limit are told to end. Runs where TEST_REDIS_URL is set.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { LocalLeases, leaseId, RedisLeases } from '../../src/platform/leases.ts';

const REDIS_URL = process.env.TEST_REDIS_URL;

describe('leases in Redis', { skip: REDIS_URL ? false : 'set TEST_REDIS_URL to run' }, () => {
  const prefix = `chessport-test:${randomUUID()}:`;
  let redis: Redis;
  let leases: RedisLeases;
  before(() => {
    redis = new Redis(REDIS_URL as string);
    leases = new RedisLeases(redis, 3000);
  });
  after(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });
  const later = () => new Promise((resolve) => setTimeout(resolve, 3));
  /** `n` leases of the key, each taken a few ms after the one before. */
  async function take(key: string, n: number, limit: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = await leases.acquire(key, limit);
      assert.ok(id, `lease ${i + 1} of ${n}`);
      ids.push(id);
      await later();
    }
    return ids;
  }

  test('up to the limit, then none; a lease renewed is kept; a lease given back frees its slot', async () => {
    const key = `${prefix}heavy:export:a`;
    const [first, second] = await take(key, 2, 2);
    assert.equal(await leases.acquire(key, 2), undefined);
    assert.equal(await leases.renew(key, first as string, 2), 'kept');
    assert.equal(await leases.renew(key, second as string, 2), 'kept');
    assert.equal(await redis.zcard(key), 2);
    await leases.release(key, first as string);
    assert.ok(await leases.acquire(key, 2));
  });

  test('after Redis lost them, the leases running before are added again and the newer ones beyond the limit end', async () => {
    const key = `${prefix}heavy:long-poll:b`;
    const old = await take(key, 4, 4);
    await redis.del(key); // a restart that kept nothing
    const newer = await take(key, 4, 4); // let in, as the key was empty
    // The old ones renew first: each comes back in its place, the oldest first, over the limit for now.
    for (const id of old) assert.equal(await leases.renew(key, id, 4), 'kept');
    assert.equal(await redis.zcard(key), 8);
    assert.equal(await leases.acquire(key, 4), undefined, 'no new one meanwhile');
    // The newer ones learn at their renewal that 4 older ones run: they end, and their leases go.
    for (const id of newer) assert.equal(await leases.renew(key, id, 4), 'over');
    assert.deepEqual((await redis.zrange(key, '0', '-1')).sort(), [...old].sort());
  });

  test('whichever renews first, the oldest leases up to the limit are the ones kept', async () => {
    const key = `${prefix}heavy:export:c`;
    const old = await take(key, 2, 2);
    await redis.del(key);
    const newer = await take(key, 2, 2);
    // A newer one renews before the old ones are back: it is within the limit then, and kept.
    assert.equal(await leases.renew(key, newer[0] as string, 2), 'kept');
    assert.equal(await leases.renew(key, old[1] as string, 2), 'kept');
    assert.equal(await leases.renew(key, newer[1] as string, 2), 'over');
    assert.equal(await leases.renew(key, old[0] as string, 2), 'kept');
    // Now two older ones run: the newer one ends at its next renewal.
    assert.equal(await leases.renew(key, newer[0] as string, 2), 'over');
    assert.deepEqual((await redis.zrange(key, '0', '-1')).sort(), [...old].sort());
  });

  test('leases held in an instance while Redis failed move in by when they were taken', async () => {
    const key = `${prefix}heavy:export:d`;
    const local = new LocalLeases();
    const during = local.take(key, 2) as string;
    await later();
    // Another instance reached Redis meanwhile, after this one had taken its lease.
    const elsewhere = await take(key, 2, 2);
    assert.equal(await leases.renew(key, during, 2), 'kept', 'older than both: moves in');
    assert.equal(await leases.renew(key, elsewhere[0] as string, 2), 'kept');
    assert.equal(await leases.renew(key, elsewhere[1] as string, 2), 'over');
    // One taken later than every lease in Redis does not fit.
    await later();
    const late = local.take(key, 2) as string;
    assert.equal(await leases.renew(key, late, 2), 'over');
    assert.equal(await redis.zcard(key), 2);
  });

  test('a lease that expired while its holder could not renew it comes back in its place', async () => {
    const key = `${prefix}heavy:export:e`;
    const short = new RedisLeases(redis, 200);
    const old = (await short.acquire(key, 1)) as string;
    await new Promise((resolve) => setTimeout(resolve, 400));
    const newer = (await short.acquire(key, 1)) as string;
    assert.ok(newer, 'the expired lease no longer counts');
    assert.equal(await short.renew(key, old, 1), 'kept');
    assert.equal(await short.renew(key, newer, 1), 'over');
  });

  test('ids sort by when they were taken; this instance counts the leases it holds, in Redis or not', () => {
    assert.ok(leaseId(999) < leaseId(1000));
    assert.match(leaseId(Date.now()), /^\d{15}:[0-9a-f-]{36}$/);
    const local = new LocalLeases();
    const key = 'k';
    local.add(key, leaseId(1));
    assert.ok(local.take(key, 2));
    assert.equal(local.take(key, 2), undefined);
    assert.equal(local.count(key), 2);
  });
});
