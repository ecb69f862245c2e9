// Concurrency slots as expiring leases: a slot is taken by adding a lease to its key, given back by removing
// it. In Redis a key is a sorted set of lease ids scored by their expiry (Redis's own clock, so the
// instances' clocks do not matter); a holder renews its lease while it runs, so a lease whose instance died,
// or lost its link to Redis, expires by itself. In this process a key is a set, emptied when its holders
// end (a process that dies takes its slots with it).
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LeaseStore {
  /** Adds a lease to `key` when fewer than `limit` are live there: its id, or undefined when all are taken. */
  acquire(key: string, limit: number): Promise<string | undefined>;
  /** Moves the lease's expiry on; false when it had expired meanwhile (it is not taken again). */
  renew(key: string, id: string): Promise<boolean>;
  release(key: string, id: string): Promise<void>;
}

/** Leases held in this process. They never expire: every holder gives its lease back when it ends. */
export class LocalLeases implements LeaseStore {
  readonly #held = new Map<string, Set<string>>();

  async acquire(key: string, limit: number): Promise<string | undefined> {
    return this.take(key, limit);
  }

  /** acquire, synchronously. */
  take(key: string, limit: number): string | undefined {
    let leases = this.#held.get(key);
    if ((leases?.size ?? 0) >= limit) return undefined;
    if (!leases) {
      leases = new Set();
      this.#held.set(key, leases);
    }
    const id = randomUUID();
    leases.add(id);
    return id;
  }

  async renew(key: string, id: string): Promise<boolean> {
    return this.#held.get(key)?.has(id) ?? false;
  }

  async release(key: string, id: string): Promise<void> {
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

/** KEYS[1]: the slot's key; ARGV: lease id, ttl ms, limit. 1 when the lease was added, 0 when all are taken. */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
${KEEP_KEY}
return 1`;

/** KEYS[1]: the slot's key; ARGV: lease id, ttl ms. 1 when the lease was live and is renewed, else 0. */
const RENEW = `${NOW}
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry or tonumber(expiry) <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[1])
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
export class RedisLeases implements LeaseStore {
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

  async acquire(key: string, limit: number): Promise<string | undefined> {
    const id = randomUUID();
    return (await this.#acquire(key, id, this.#ttlMs, limit)) === 1 ? id : undefined;
  }

  async renew(key: string, id: string): Promise<boolean> {
    return (await this.#renew(key, id, this.#ttlMs)) === 1;
  }

  async release(key: string, id: string): Promise<void> {
    await this.#redis.zrem(key, id);
  }
}
