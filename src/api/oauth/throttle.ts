// The sign-in throttle: failed sign-ins are counted per account and per client address in fixed windows;
// past either limit, sign-in is refused until the window ends, without checking the password. The counters
// are shared by every instance in Redis when REDIS_URL is set (kept here when Redis fails, as the rate
// limits are), else kept in this process. An unknown login is counted like a known one, so the answer tells
// nothing about which logins exist.
import { createHash } from 'node:crypto';
import { normalizeIP } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';

export interface SignInLimits {
  /** Failed sign-ins per account in a window. */
  perAccount: number;
  /** Failed sign-ins per client address (an IPv6 /64) in a window. */
  perAddress: number;
  windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  perAccount: 10,
  perAddress: 50,
  windowMs: 15 * 60_000,
};

/** Counters kept in this process; a flood of fresh keys drops the oldest first. */
const LOCAL_KEYS = 100_000;

export class SignInThrottle {
  private readonly redis: Redis | null;
  private readonly prefix: string;
  private readonly limits: SignInLimits;
  private readonly local = new Map<string, { count: number; until: number }>();

  constructor(redis: Redis | null, prefix: string, limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS) {
    this.redis = redis;
    this.prefix = `${prefix}signin:`;
    this.limits = limits;
  }

  private keys(login: string, ip: string): [string, number][] {
    const account = createHash('sha256').update(login).digest('base64url');
    return [
      [`${this.prefix}account:${account}`, this.limits.perAccount],
      [`${this.prefix}address:${normalizeIP(ip)}`, this.limits.perAddress],
    ];
  }

  /** Seconds until this login may be tried from this address again; 0 when it may now. */
  async retryAfter(login: string, ip: string, now = Date.now()): Promise<number> {
    let wait = 0;
    for (const [key, max] of this.keys(login, ip)) {
      const { count, until } = await this.read(key, now);
      if (count >= max) wait = Math.max(wait, Math.ceil((until - now) / 1000));
    }
    return wait;
  }

  /** Counts a failed sign-in. */
  async failed(login: string, ip: string, now = Date.now()): Promise<void> {
    for (const [key] of this.keys(login, ip)) await this.count(key, now);
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
