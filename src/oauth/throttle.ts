// The throttles of guesses: every attempt is counted per account and per client address in fixed windows
// before what it sends is checked, and refused, unchecked, when either count is at its limit; an attempt that
// proves right gives its count back. Counting and deciding are one atomic step (a synchronous step in this
// process, a script in Redis), so a burst of concurrent attempts gets no more checks than the limit. Two
// instances use it: sign-in (passwords; an unknown login is counted like a known one, so the answer tells
// nothing about which logins exist) and the device flow's code entry (user codes, RFC 8628 section 5.1).
// Attempts are always counted in this process, and with REDIS_URL in Redis too, which every instance shares:
// an attempt is checked only when both admit it. So one instance never checks more than the limit, even
// while Redis fails or answers late (it then counts here alone), and instances together check no more than
// the limit while Redis answers (each up to the limit while it does not).
import { createHash, randomBytes } from 'node:crypto';
import { normalizeIP } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

export interface ThrottleLimits {
  /** Guesses per account in a window. */
  perAccount: number;
  /** Guesses per client address (an IPv6 /64) in a window, whichever accounts they name. */
  perAddress: number;
  windowMs: number;
}

/**
 * Wrong passwords: 10 per account and 10 per address in 15 minutes. An address may try 10 passwords in all,
 * whether at one account or one each at 10 (password spraying); a right one is not counted.
 */
export const DEFAULT_SIGN_IN_LIMITS: ThrottleLimits = {
  perAccount: 10,
  perAddress: 10,
  windowMs: 15 * 60_000,
};

/**
 * Wrong user codes on the device code page: 10 per signed-in account and 10 per address in 15 minutes. A
 * code is 8 letters of 20 (20^8, some 2.6e10) and lives 10 minutes, so this leaves a guess no chance; a user
 * who mistypes does so a few times at most.
 */
export const DEFAULT_DEVICE_CODE_LIMITS: ThrottleLimits = {
  perAccount: 10,
  perAddress: 10,
  windowMs: 15 * 60_000,
};

/** An attempt counted before it is checked: its counters, and the window each counted it in. */
export interface Reservation {
  readonly keys: readonly string[];
  /** The windows of this process's counters. */
  readonly windows: readonly string[];
  /** The windows of the counters in Redis, when Redis counted it too. */
  readonly sharedWindows?: readonly string[];
}

/** An attempt counted (check it, then give its count back if it proves right), or refused unchecked. */
export type Admission = { reservation: Reservation } | { retryAfterS: number };

/** Counters kept in this process; a flood of fresh keys drops the oldest first. */
const LOCAL_KEYS = 100_000;

/**
 * KEYS: the counters, hashes of `n` (the count) and `w` (the window's id, made with it). ARGV[1]: the window
 * in ms; ARGV[2]: the id of a window this call opens; ARGV[2 + i]: the limit of KEYS[i]. When a counter is at
 * its limit, counts nothing and returns {0, the ms until that window ends}; else counts the attempt in every
 * counter and returns {1, the id of each counter's window}.
 */
const RESERVE = `
local wait = 0
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('HGET', key, 'n') or 0) >= tonumber(ARGV[2 + i]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then
      redis.call('PEXPIRE', key, ARGV[1])
      ttl = tonumber(ARGV[1])
    end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return {0, wait} end
local windows = {}
for i, key in ipairs(KEYS) do
  redis.call('HINCRBY', key, 'n', 1)
  redis.call('HSETNX', key, 'w', ARGV[2])
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ARGV[1]) end
  windows[i] = redis.call('HGET', key, 'w')
end
return {1, unpack(windows)}`;

/** KEYS: the counters; ARGV[i]: the window KEYS[i] was counted in. A counter whose window has ended is left alone. */
const GIVE_BACK = `
for i, key in ipairs(KEYS) do
  if redis.call('HGET', key, 'w') == ARGV[i] then redis.call('HINCRBY', key, 'n', -1) end
end
return 0`;

type Script = (keyCount: number, ...args: (string | number)[]) => Promise<unknown>;

/** A script sent once and then run by its SHA (ioredis's defineCommand), with any number of keys. */
function script(redis: Redis, name: string, lua: string): Script {
  if (!(name in redis)) redis.defineCommand(name, { lua });
  const command = (redis as unknown as Record<string, Script>)[name] as Script;
  return (...args) => command.call(redis, ...args);
}

interface Window {
  count: number;
  until: number;
  id: string;
}

export class GuessThrottle {
  private readonly prefix: string;
  private readonly limits: ThrottleLimits;
  private readonly reserveShared: Script | undefined;
  private readonly giveBackShared: Script | undefined;
  private readonly local = new Map<string, Window>();
  private windowsOpened = 0;

  /** `kind` keeps each throttle's counters apart under the Redis prefix: `signin:`, `devicecode:`. */
  constructor(redis: Redis | null, prefix: string, kind: string, limits: ThrottleLimits) {
    this.prefix = `${prefix}${kind}`;
    this.limits = limits;
    if (redis) {
      this.reserveShared = script(redis, 'chessportGuessReserve', RESERVE);
      this.giveBackShared = script(redis, 'chessportGuessGiveBack', GIVE_BACK);
    }
  }

  /** The counters of an attempt and their limits: the address's, and the account's when one is named. */
  private counters(account: string | undefined, ip: string): [string, number][] {
    const counters: [string, number][] = [
      [`${this.prefix}guesses:address:${normalizeIP(ip)}`, this.limits.perAddress],
    ];
    if (account !== undefined) {
      const hashed = createHash('sha256').update(account).digest('base64url');
      counters.push([`${this.prefix}guesses:account:${hashed}`, this.limits.perAccount]);
    }
    return counters;
  }

  /**
   * Counts an attempt at this account (if one is named) from this address, or refuses it when either has had
   * its limit of attempts in the window: then nothing is counted, and the answer is the seconds to wait.
   */
  async reserve(account: string | undefined, ip: string, now = Date.now()): Promise<Admission> {
    const counters = this.counters(account, ip);
    const here = this.reserveHere(counters, now);
    if (!('reservation' in here) || !this.reserveShared) return here;
    try {
      const answer = (await this.reserveShared(
        counters.length,
        ...counters.map(([key]) => key),
        this.limits.windowMs,
        randomBytes(12).toString('base64url'),
        ...counters.map(([, max]) => max),
      )) as [number, ...(string | number)[]];
      if (answer[0] === 0) {
        this.giveBackHere(here.reservation, now);
        return { retryAfterS: Math.max(1, Math.ceil(Number(answer[1]) / 1000)) };
      }
      return { reservation: { ...here.reservation, sharedWindows: answer.slice(1).map(String) } };
    } catch {
      // Counted here alone while Redis fails.
      return here;
    }
  }

  /** Gives back the count of an attempt that proved right, in the windows it was counted in, if still open. */
  async giveBack(reservation: Reservation, now = Date.now()): Promise<void> {
    this.giveBackHere(reservation, now);
    if (!reservation.sharedWindows) return;
    try {
      await this.giveBackShared?.(reservation.keys.length, ...reservation.keys, ...reservation.sharedWindows);
    } catch {
      // The count stays in Redis until its window ends.
    }
  }

  private giveBackHere(reservation: Reservation, now: number): void {
    reservation.keys.forEach((key, i) => {
      const window = this.local.get(key);
      if (window && window.until > now && window.id === reservation.windows[i]) window.count--;
    });
  }

  /** reserve, in this process: synchronous, so that no other attempt is counted between check and count. */
  private reserveHere(counters: [string, number][], now: number): Admission {
    let waitMs = 0;
    for (const [key, max] of counters) {
      const window = this.local.get(key);
      if (window && window.until > now && window.count >= max) waitMs = Math.max(waitMs, window.until - now);
    }
    if (waitMs > 0) return { retryAfterS: Math.ceil(waitMs / 1000) };
    const windows = counters.map(([key]) => {
      let window = this.local.get(key);
      if (!window || window.until <= now) {
        window = { count: 0, until: now + this.limits.windowMs, id: (this.windowsOpened++).toString(36) };
      }
      window.count++;
      // Last in the map's order: the oldest counters go first when it is full.
      this.local.delete(key);
      this.local.set(key, window);
      return window.id;
    });
    for (const oldest of this.local.keys()) {
      if (this.local.size <= LOCAL_KEYS) break;
      this.local.delete(oldest);
    }
    return { reservation: { keys: counters.map(([key]) => key), windows } };
  }
}
