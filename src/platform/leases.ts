// Concurrency slots as expiring leases: a slot is taken by adding a lease to its key, given back by removing
// it. In Redis a key is a sorted set of lease ids scored by their expiry (Redis's own clock, so the
// instances' clocks do not matter); a holder renews its lease while it runs, so a lease whose instance died
// expires by itself. In this process a key is a set of the leases this instance holds, in Redis or not.
//
// A lease id begins with when the lease was first taken (ms, 15 digits): Redis's clock, or this instance's
// for a lease taken while Redis failed. That orders a key's leases from the oldest, for the case where Redis
// holds more than the limit: a lease it lost (restarted empty, failed over to a replica that had not got it,
// expired while its holder could not reach it) is added again at its renewal, in its place, and so is a
// lease an instance took while Redis failed, once Redis answers again. Requests that Redis let start
// meanwhile may then make more than the limit: at their renewals, the leases beyond the limit from the
// oldest are removed, and their holders end their requests. So the cap holds again within two renewals,
// and the requests that keep running are the ones that started first (an export may have run for an hour).
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A lease id taken at `ms` (since the epoch): the time, so that ids sort by it, then a random part. */
export function leaseId(ms: number): string {
  return `${String(Math.floor(ms)).padStart(15, '0')}:${randomUUID()}`;
}

/** The leases this instance holds, per key. They never expire: every holder gives its lease back when it ends. */
export class LocalLeases {
  readonly #held = new Map<string, Set<string>>();

  /** How many leases of `key` this instance holds. */
  count(key: string): number {
    return this.#held.get(key)?.size ?? 0;
  }

  /** A new lease of `key` when this instance holds fewer than `limit` there: its id, or undefined. */
  take(key: string, limit: number): string | undefined {
    if (this.count(key) >= limit) return undefined;
    const id = leaseId(Date.now());
    this.add(key, id);
    return id;
  }

  /** Counts a lease taken elsewhere (in Redis) among this instance's. */
  add(key: string, id: string): void {
    let leases = this.#held.get(key);
    if (!leases) {
      leases = new Set();
      this.#held.set(key, leases);
    }
    leases.add(id);
  }

  release(key: string, id: string): void {
    const leases = this.#held.get(key);
    if (!leases) return;
    leases.delete(id);
    if (leases.size === 0) this.#held.delete(key);
  }
}

/** Redis's clock in ms, in a script (TIME is allowed there since Redis 5, which replicates scripts' effects). */
const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
`;

/** The key outlives its longest lease, and no longer: an idle client's key vanishes. */
const KEEP_KEY = `
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
`;

/**
 * KEYS[1]: the slot's key; ARGV: the random part of the id, ttl ms, limit. The lease's id when it was added,
 * false (nil) when all are taken.
 */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return false end
local id = string.format('%015d', now) .. ':' .. ARGV[1]
redis.call('ZADD', KEYS[1], now + ttl, id)
${KEEP_KEY}
return id`;

/**
 * KEYS[1]: the slot's key; ARGV: lease id, ttl ms, limit. 1 when the lease is kept: renewed, or added again in
 * its place if Redis had lost it. 0 when `limit` live leases are older: it is removed, and its holder ends.
 * An id without a time (a lease of an older version, during an upgrade) counts as the oldest.
 */
const RENEW = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local id = ARGV[1]
local function since(lease) return tonumber(string.sub(lease, 1, 15)) or 0 end
local mine = since(id)
local older = 0
for _, other in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local at = since(other)
  if other ~= id and (at < mine or (at == mine and other < id)) then older = older + 1 end
end
if older >= tonumber(ARGV[3]) then
  redis.call('ZREM', KEYS[1], id)
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, id)
${KEEP_KEY}
return 1`;

type Script = (key: string, ...args: (string | number)[]) => Promise<unknown>;

/** A script sent once and then run by its SHA (ioredis's defineCommand). */
function script(redis: Redis, name: string, lua: string): Script {
  if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 1, lua });
  const command = (redis as unknown as Record<string, Script>)[name] as Script;
  return (key, ...args) => command.call(redis, key, ...args);
}

/** Leases in Redis, shared by every instance; each lives `ttlMs` unless renewed. */
export class RedisLeases {
  readonly #redis: Redis;
  readonly #ttlMs: number;
  readonly #acquire: Script;
  readonly #renew: Script;

  constructor(redis: Redis, ttlMs: number) {
    this.#redis = redis;
    this.#ttlMs = ttlMs;
    this.#acquire = script(redis, 'chessportLeaseAcquire', ACQUIRE);
    this.#renew = script(redis, 'chessportLeaseRenew', RENEW);
  }

  /** Adds a lease to `key` when fewer than `limit` are live there: its id, or undefined when all are taken. */
  async acquire(key: string, limit: number): Promise<string | undefined> {
    const id = await this.#acquire(key, randomUUID(), this.#ttlMs, limit);
    return typeof id === 'string' ? id : undefined;
  }

  /**
   * Moves the lease's expiry on, adding it again in its place if Redis has lost it (or never had it: a lease
   * taken in this process while Redis failed). `over` when `limit` older leases are live: the lease is
   * removed, and its holder must end its request.
   */
  async renew(key: string, id: string, limit: number): Promise<'kept' | 'over'> {
    return (await this.#renew(key, id, this.#ttlMs, limit)) === 1 ? 'kept' : 'over';
  }

  async release(key: string, id: string): Promise<void> {
    await this.#redis.zrem(key, id);
  }
}
