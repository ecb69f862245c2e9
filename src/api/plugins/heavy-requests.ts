// Concurrency limits for heavy requests (heavy-kinds.ts): the request rate limit counts requests, but one
// request may hold the server's work for minutes (a whole database's PGN export), so a client could take
// most of the server within its budget. A route takes a slot for its request (`hold`) and keeps it until
// the answer ends, however it ends: finished, failed, or its client gone.
//
// Three limits, checked in this order:
// - load shedding (load-shedding.ts): while the process is overloaded (its event loop late, its heap nearly
//   full), heavy requests get 503 `unavailable`, and light ones (/me) go on being answered;
// - per app and user: at most `perClient` of a kind at once, across every instance (429 `rate_limited`).
//   The slots are leases in Redis, shared like the rate-limit counters (same Redis, prefix and circuit
//   breaker) and renewed while the answer runs, so that the slots of an instance that dies expire by
//   themselves; without Redis, or while it fails, they are held in this process (a per-instance limit). A
//   renewal takes a lease Redis lost (a restart, a failover) again, and moves one held here during an
//   outage into Redis; if the client then holds more than its limit, the newest beyond it are cut off
//   (leases.ts). This instance also counts every lease it holds, so that it alone never lets a client over;
// - per instance: at most `perInstance` of a kind run here at once, for everyone (503 `unavailable`).
//   Taken after the app and user's slot, so that the requests a client's limit refuses never hold the
//   instance's slots while Redis is asked (a full instance refuses before Redis is asked, holding nothing).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { askGuarded, type CircuitBreaker } from '../../platform/circuit-breaker.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { LocalLeases, RedisLeases } from '../../platform/leases.ts';
import { heavyMetrics } from '../../platform/metrics.ts';
import { OutageLog, requests } from '../../platform/outage-log.ts';
import {
  defaultHeavyLimits,
  HEAVY_DEFAULTS,
  HEAVY_KINDS,
  type HeavyKind,
  type HeavyLimits,
} from '../heavy-kinds.ts';

/**
 * Retry-After of a refusal. A slot frees when another answer ends, which no one can tell in advance: a few
 * seconds keeps a waiting client from asking many times a second (each ask counts against its rate limit).
 */
export const HEAVY_RETRY_AFTER_S = 5;

export interface HeavySettings {
  /** Limits per kind; a kind left out keeps its defaults (heavy-kinds.ts). */
  limits?: Partial<Record<HeavyKind, HeavyLimits>>;
  /** How long a lease lives unless renewed; it is renewed every third of that while its request runs. */
  leaseTtlMs?: number;
  /** Shared leases; null holds them in this process. */
  redis?: Redis | null;
  redisPrefix?: string;
  /** The Redis circuit breaker, shared with the rate limit: one Redis, one verdict on whether it answers. */
  breaker: CircuitBreaker;
  outageLogIntervalMs?: number;
  /** What overloads the process right now (`event-loop delay`, `heap`), or undefined (load-shedding.ts). */
  pressure?: () => string | undefined;
}

export interface HeavyRequests {
  /**
   * Takes a slot of `kind` for the request's app and user, or throws the 503 or 429 that refuses it. The slot
   * is given back when the answer's connection closes; the function returned gives it back sooner.
   */
  hold(request: FastifyRequest, reply: FastifyReply, kind: HeavyKind): Promise<() => void>;
  /** The kind's limits in force. */
  limits(kind: HeavyKind): HeavyLimits;
}

const SHARED_OUTAGE = {
  down: 'heavy-request limits: shared leases unreachable, holding slots in this process',
  more: (count: string, seconds: string) =>
    `heavy-request limits: shared leases unreachable: ${count} more ${requests(count)} held in this process in the last ${seconds} s`,
  back: (seconds: string, count: string) =>
    `heavy-request limits: shared leases are back after ${seconds} s, ${count} ${requests(count)} held in this process`,
};

/** A slot of an app and user's. */
interface Lease {
  id: string;
  /** Held in Redis; else in this process alone, until a renewal moves it into Redis. */
  shared: boolean;
}

export function heavyRequests(app: FastifyInstance, settings: HeavySettings): HeavyRequests {
  const limits = { ...defaultHeavyLimits(), ...settings.limits };
  const ttlMs = settings.leaseTtlMs ?? HEAVY_DEFAULTS.leaseTtlMs;
  const prefix = `${settings.redisPrefix ?? 'chessport:'}heavy:`;
  /** Every lease this instance holds, whether in Redis or not. */
  const local = new LocalLeases();
  const shared = settings.redis ? new RedisLeases(settings.redis, ttlMs) : undefined;
  const breaker = settings.breaker;
  const outage = new OutageLog(app.log, SHARED_OUTAGE, settings.outageLogIntervalMs);
  app.addHook('onClose', async () => outage.close());
  const guarded = { breaker, outage, failures: heavyMetrics.leaseErrors };
  /** Heavy requests running in this instance, by kind. */
  const running = new Map<HeavyKind, number>();
  const retryAfter = { 'retry-after': String(HEAVY_RETRY_AFTER_S) };

  /**
   * A lease of the key: in Redis while it answers, else in this process. None when this instance alone holds
   * `limit` of them already (Redis may have lost them), or Redis holds `limit`.
   */
  async function lease(request: FastifyRequest, key: string, limit: number): Promise<Lease | undefined> {
    if (local.count(key) >= limit) return undefined;
    if (shared) {
      const asked = await askGuarded(guarded, request.log, () => shared.acquire(key, limit));
      if (asked) {
        if (asked.answer === undefined) return undefined;
        local.add(key, asked.answer);
        return { id: asked.answer, shared: true };
      }
    }
    const id = local.take(key, limit);
    return id === undefined ? undefined : { id, shared: false };
  }

  /**
   * Renews a lease in Redis while the breaker lets it (a failure only tells the breaker): one Redis lost is
   * added again, one held in this process alone is moved in. `over` when the app and user hold `limit`
   * older leases: the request must end.
   */
  async function renew(key: string, lease: Lease, limit: number): Promise<'kept' | 'over' | undefined> {
    if (!shared || !breaker.allow()) return undefined;
    try {
      const kept = await shared.renew(key, lease.id, limit);
      breaker.succeeded();
      return kept;
    } catch {
      heavyMetrics.leaseErrors.inc();
      breaker.failed();
      return undefined;
    }
  }

  function refuse(kind: HeavyKind, limit: 'pressure' | 'instance' | 'client', error: ApiError): never {
    heavyMetrics.refused.inc({ kind, limit });
    throw error;
  }

  return {
    limits: (kind) => limits[kind],

    async hold(request, reply, kind) {
      const token = request.token;
      if (!token) throw new Error('hold() needs an authenticated request');
      const { what, one } = HEAVY_KINDS[kind];
      const { perClient, perInstance } = limits[kind];
      const pressure = settings.pressure?.();
      if (pressure !== undefined) {
        const text = `The server is overloaded (${pressure}) and refuses ${what} for now: retry in ${HEAVY_RETRY_AFTER_S} s.`;
        refuse(kind, 'pressure', new ApiError('unavailable', text, retryAfter));
      }
      const full = (): never => {
        const text = `The server is running as many ${what} as it takes at once (${perInstance}): retry in ${HEAVY_RETRY_AFTER_S} s.`;
        refuse(kind, 'instance', new ApiError('unavailable', text, retryAfter));
      };
      // A full instance refuses at once, without asking Redis.
      if ((running.get(kind) ?? 0) >= perInstance) full();
      const key = `${prefix}${kind}:app:${token.appId}:user:${token.userId}`;
      let leased: Lease | undefined;
      let counted = false;
      let timer: NodeJS.Timeout | undefined;
      let released = false;
      const giveBack = (lease: Lease) => {
        local.release(key, lease.id);
        // A lease that cannot be removed (Redis failed meanwhile) expires by itself.
        if (lease.shared) shared?.release(key, lease.id).catch(() => undefined);
      };
      const release = () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        if (counted) {
          running.set(kind, (running.get(kind) ?? 1) - 1);
          heavyMetrics.held.dec({ kind });
        }
        if (leased) giveBack(leased);
      };
      // Listened to before Redis is asked: a client that leaves meanwhile gives its slot back at once.
      reply.raw.once('close', release);
      // The app and user's slot first, then the instance's: a request its client's limit refuses never holds
      // one of the instance's slots, which are everyone's, while Redis is asked.
      try {
        leased = await lease(request, key, perClient);
      } catch (error) {
        release();
        throw error;
      }
      if (!leased) {
        release();
        const text =
          `Too many ${what} at once: at most ${perClient} ${perClient === 1 ? one : what} at once per app ` +
          'and user. Retry when one of them has ended.';
        refuse(kind, 'client', new ApiError('rate_limited', text, retryAfter));
      }
      if (released) {
        // The client left while the lease was being taken, before there was a lease to give back.
        giveBack(leased);
        return release;
      }
      // From the check to the count without an await: requests whose leases came back together take the
      // instance's slots one at a time, and never more than there are.
      if ((running.get(kind) ?? 0) >= perInstance) {
        release();
        full();
      }
      running.set(kind, (running.get(kind) ?? 0) + 1);
      counted = true;
      heavyMetrics.held.inc({ kind });
      if (shared) {
        // Renewed in Redis while the answer runs; a lease held here alone (Redis failed when it was taken)
        // moves into Redis at the first renewal Redis answers.
        const held = leased;
        let renewing = false;
        const keep = async () => {
          if (renewing) return;
          renewing = true;
          const kept = await renew(key, held, perClient);
          renewing = false;
          if (released) {
            // Ended while Redis was asked: a lease the renewal moved into Redis is removed from it too.
            if (kept === 'kept' && !held.shared) shared.release(key, held.id).catch(() => undefined);
            return;
          }
          if (kept === 'kept') held.shared = true;
          if (kept !== 'over') return;
          // Redis had lost this client's leases, or not seen those held during its outage, and let more
          // start than the limit: the newest beyond it end (leases.ts), this one among them.
          heavyMetrics.overLimit.inc({ kind });
          request.log.info(
            { kind },
            `heavy request cut off: its app and user held more than ${perClient} ${perClient === 1 ? one : what} at once`,
          );
          release();
          reply.raw.destroy();
        };
        timer = setInterval(() => void keep(), Math.max(1000, Math.floor(ttlMs / 3)));
        timer.unref();
      }
      return release;
    },
  };
}
