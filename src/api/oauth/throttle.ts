// The throttles of guesses: failures are counted per account and per client address in fixed windows; past
// either limit, the attempt is refused until the window ends, without checking what was sent. Two instances
// use it: sign-in (failed passwords; an unknown login is counted like a known one, so the answer tells nothing
// about which logins exist) and the device flow's code entry (unknown user codes, RFC 8628 section 5.1). The
// counters are shared by every instance in Redis when REDIS_URL is set (kept here when Redis fails, as the
// rate limits are), else kept in this process.
import { createHash } from 'node:crypto';
import { normalizeIP } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

export interface ThrottleLimits {
  /** Failures per account in a window. */
  perAccount: number;
  /** Failures per client address (an IPv6 /64) in a window. */
  perAddress: number;
  windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: ThrottleLimits = {
  perAccount: 10,
  perAddress: 50,
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

/** Counters kept in this process; a flood of fresh keys drops the oldest first. */
const LOCAL_KEYS = 100_000;

export class GuessThrottle {
  private readonly redis: Redis | null;
  private readonly prefix: string;
  private readonly limits: ThrottleLimits;
  private readonly local = new Map<string, { count: number; until: number }>();

  /** `kind` keeps each throttle's counters apart under the Redis prefix: `signin:`, `devicecode:`. */
  constructor(redis: Redis | null, prefix: string, kind: string, limits: ThrottleLimits) {
    this.redis = redis;
    this.prefix = `${prefix}${kind}`;
    this.limits = limits;
  }

  /** The counters of an attempt: the account's (when one is named) and the address's. */
  private keys(account: string | undefined, ip: string): [string, number][] {
    const keys: [string, number][] = [[`${this.prefix}address:${normalizeIP(ip)}`, this.limits.perAddress]];
    if (account !== undefined) {
      const hashed = createHash('sha256').update(account).digest('base64url');
      keys.push([`${this.prefix}account:${hashed}`, this.limits.perAccount]);
    }
    return keys;
  }

  /** Seconds until this account may be tried from this address again; 0 when it may now. */
  async retryAfter(account: string | undefined, ip: string, now = Date.now()): Promise<number> {
    let wait = 0;
    for (const [key, max] of this.keys(account, ip)) {
      const { count, until } = await this.read(key, now);
      if (count >= max) wait = Math.max(wait, Math.ceil((until - now) / 1000));
    }
    return wait;
  }

  /** Counts a failure. */
  async failed(account: string | undefined, ip: string, now = Date.now()): Promise<void> {
    for (const [key] of this.keys(account, ip)) await this.count(key, now);
  }

  private async read(key: string, now: number): Promise<{ count: number; until: number }> {
    if (this.redis) {
      try {
        const [count, ttl] = (await this.redis.multi().get(key).pttl(key).exec()) ?? [];
        return { count: Number(count?.[1] ?? 0), until: now + Math.max(0, Number(ttl?.[1] ?? 0)) };
      } catch {
        // Counted here while Redis fails.
      }
    }
    const window = this.local.get(key);
    return window && window.until > now ? window : { count: 0, until: now };
  }

  private async count(key: string, now: number): Promise<void> {
    if (this.redis) {
      try {
        await this.redis.multi().incr(key).pexpire(key, this.limits.windowMs, 'NX').exec();
        return;
      } catch {
        // Counted here while Redis fails.
      }
    }
    let window = this.local.get(key);
    if (!window || window.until <= now) window = { count: 0, until: now + this.limits.windowMs };
    window.count++;
    this.local.delete(key);
    this.local.set(key, window);
    if (this.local.size > LOCAL_KEYS) {
      const oldest = this.local.keys().next().value;
      if (oldest !== undefined) this.local.delete(oldest);
    }
  }
}
