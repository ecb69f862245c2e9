// Rate limits (docs/design.md 25): one fixed window per app and user for a valid token, per client address for
// everything else on the API (so guessing tokens is throttled too). Counting is @fastify/rate-limit's, on
// counters kept in this process (LocalCounts, below) or Redis counters (one atomic script per request) shared
// by every instance. When Redis fails the request is counted locally instead: the service stays up, the
// limit becomes per instance. A circuit breaker then skips Redis for a cool-down, so that a hung one does not
// hold every request up.
import fastifyRateLimit, { type FastifyRateLimitStore, normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { askGuarded, CircuitBreaker } from '../circuit-breaker.ts';
import { rateLimitMetrics } from '../metrics.ts';
import { OutageLog, requests } from '../outage-log.ts';
import { ApiError } from './errors.ts';

export interface RateLimitSettings {
  max: number;
  windowMs: number;
  /** Shared counters; null keeps them in this process. */
  redis?: Redis | null;
  /** Key prefix in Redis, so several deployments (or test runs) can share one Redis. */
  redisPrefix?: string;
  /** How often a Redis outage is summarised in the log (outage-log.ts). */
  outageLogIntervalMs?: number;
  /** The Redis circuit breaker, when others share it (heavy-requests.ts); default one of its own. */
  breaker?: CircuitBreaker;
  /**
   * Whether a 304 gives its count back: the API's cheap 304s (isCheapNotModified, in
   * src/api/plugins/conditional.ts); by default none does.
   */
  refundable?: (request: FastifyRequest) => boolean;
}

/** The circuit breaker of the link to Redis, its state in /metrics. */
export function redisBreaker(): CircuitBreaker {
  return new CircuitBreaker(REDIS_COOL_DOWN_MS, (open) => rateLimitMetrics.breakerOpen.set(open ? 1 : 0));
}

/**
 * How long requests skip Redis after a failure or a timeout. Short, since the limits are per instance
 * meanwhile; long enough that a hung Redis holds only one request per cool-down up for its 0.5 s command
 * timeout.
 */
export const REDIS_COOL_DOWN_MS = 5000;

const SHARED_OUTAGE = {
  down: 'rate limits: shared counters unreachable, counting in this process',
  more: (count: string, seconds: string) =>
    `rate limits: shared counters unreachable: ${count} more ${requests(count)} counted in this process in the last ${seconds} s`,
  back: (seconds: string, count: string) =>
    `rate limits: shared counters are back after ${seconds} s, ${count} ${requests(count)} counted in this process`,
};

export interface RateLimiter {
  /** Counts the request, sets the rate-limit headers, and throws 429 rate_limited over the limit. */
  apply(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * Throws 429 rate_limited, with the headers, when this process has seen the client address's bucket
   * used up in the current window. Runs before the token is looked up, so that once an address has spent
   * its budget on wrong tokens, a right one gets the same 429 and no guess costs a store lookup.
   */
  refuseSpentAddress(request: FastifyRequest, reply: FastifyReply): void;
}

/** Where a request was counted, so that its count can be given back (a cheap 304: see rateLimiter). */
interface Charge {
  /** Counted in Redis (else in this process). */
  shared: boolean;
  bucket: string;
  /** When its window ends (ms since the epoch), as the count reported it. */
  windowEnd: number;
  max: number;
  ttlInSeconds: number;
}

type Count = ReturnType<FastifyInstance['createRateLimit']>;
type Counted = Extract<Awaited<ReturnType<Count>>, { isAllowed: false }>;

/** The bucket of a request: the token's app and user once authenticated, else the client address. */
function policyOf(request: FastifyRequest): 'app-user' | 'client-address' {
  return request.token ? 'app-user' : 'client-address';
}

// An IPv6 client is limited by its /64, as it can pick any address in it.
const addressBucket = (request: FastifyRequest) => `addr:${normalizeIP(request.ip)}`;

function bucketOf(request: FastifyRequest): string {
  const token = request.token;
  return token ? `app:${token.appId}:user:${token.userId}` : addressBucket(request);
}

/**
 * Gives one count of a Redis bucket back (KEYS[1]) if its window is still the one counted: one that ends
 * within ARGV[1] ms (a later window ends at least a window after the counted one), and fewer than ARGV[2]
 * counts were given back in that window (KEYS[2] counts them, and expires with the window). The count left,
 * or -1.
 */
const REFUND = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 or ttl >= tonumber(ARGV[1]) then return -1 end
local current = tonumber(redis.call('GET', KEYS[1]))
if not current or current <= 0 then return -1 end
local refunded = redis.call('INCR', KEYS[2])
if refunded == 1 then redis.call('PEXPIRE', KEYS[2], ttl) end
if refunded > tonumber(ARGV[2]) then return -1 end
return redis.call('DECR', KEYS[1])
`;

/** Bounds the memory of spent addresses; a flood of fresh addresses drops the oldest first. */
const SPENT_ADDRESSES = 100_000;

/** Buckets counted in this process; a flood of fresh keys drops the least recently counted first. */
const LOCAL_BUCKETS = 100_000;

/**
 * Fixed windows counted in this process, in place of @fastify/rate-limit's LocalStore. That one answers each
 * count with the bucket's own object, which the plugin reads a tick later: requests of one bucket counted
 * together (pipelined, or from parallel connections) all read the count of the last, so every one of them was
 * refused once together they passed the limit, and none showed its own remaining count.
 */
class LocalCounts implements FastifyRateLimitStore {
  private readonly windows = new Map<string, { count: number; start: number; refunded: number }>();

  incr(
    key: string,
    answer: (error: Error | null, result?: { current: number; ttl: number }) => void,
    timeWindow: number,
  ): void {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.start + timeWindow <= now) window = { count: 0, start: now, refunded: 0 };
    window.count++;
    this.windows.delete(key); // re-inserted last: the Map's order is the order of use
    this.windows.set(key, window);
    if (this.windows.size > LOCAL_BUCKETS) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    answer(null, { current: window.count, ttl: window.start + timeWindow - now });
  }

  /**
   * Gives one count of the bucket back if its window is still the one that ends at windowEnd (a later
   * window ends at least a window later: half a window tells them apart) and fewer than `most` were given
   * back in it. The count left, or undefined.
   */
  refund(key: string, windowEnd: number, timeWindow: number, most: number): number | undefined {
    const window = this.windows.get(key);
    if (!window || window.count === 0 || window.start + timeWindow >= windowEnd + timeWindow / 2)
      return undefined;
    if (window.refunded >= most) return undefined;
    window.refunded++;
    window.count--;
    return window.count;
  }

  child(): FastifyRateLimitStore {
    return this; // no route has its own limits
  }
}

export function rateLimiter(app: FastifyInstance, settings: RateLimitSettings): RateLimiter {
  const common = {
    global: false,
    max: settings.max,
    timeWindow: settings.windowMs,
    keyGenerator: bucketOf,
  };
  let local: Count | undefined;
  let shared: Count | undefined;
  const counts = new LocalCounts();
  // The plugin makes its store from a class; this one hands it the counts kept here, which refunds reach.
  class Counts implements FastifyRateLimitStore {
    incr: FastifyRateLimitStore['incr'] = (key, answer, timeWindow) => counts.incr(key, answer, timeWindow);
    child = () => this;
  }
  // Each registration in its own scope: the plugin decorates the instance it is registered on.
  app.register(async (scope) => {
    await scope.register(fastifyRateLimit, { ...common, store: Counts });
    local = scope.createRateLimit();
  });
  const redis = settings.redis;
  const nameSpace = `${settings.redisPrefix ?? 'chessport:'}ratelimit:`;
  if (redis) {
    app.register(async (scope) => {
      await scope.register(fastifyRateLimit, { ...common, redis, nameSpace });
      shared = scope.createRateLimit();
    });
  }

  // After a Redis failure or timeout, requests skip Redis for the cool-down and are counted here, as during
  // an outage; then one request probes it. The outage is logged as a few lines, not one per request.
  const breaker = settings.breaker ?? redisBreaker();
  const outage = new OutageLog(app.log, SHARED_OUTAGE, settings.outageLogIntervalMs);
  app.addHook('onClose', async () => outage.close());
  const guarded = { breaker, outage, failures: rateLimitMetrics.sharedStoreErrors };

  // What each request still being answered was counted in, for a refund.
  const charges = new WeakMap<FastifyRequest, Charge>();
  const charge = (request: FastifyRequest, counted: Counted, isShared: boolean): Counted => {
    charges.set(request, {
      shared: isShared,
      bucket: counted.key,
      windowEnd: Date.now() + counted.ttl,
      max: counted.max,
      ttlInSeconds: counted.ttlInSeconds,
    });
    return counted;
  };

  async function count(request: FastifyRequest): Promise<Counted | undefined> {
    if (shared) {
      const counter = shared;
      const asked = await askGuarded(guarded, request.log, () => counter(request));
      if (asked) return asked.answer.isAllowed ? undefined : charge(request, asked.answer, true);
    }
    if (!local) return undefined;
    const counted = await local(request);
    return counted.isAllowed ? undefined : charge(request, counted, false);
  }

  /** Gives the request's count back where it was counted; the count left there, or undefined for none. */
  async function refund(spent: Charge): Promise<number | undefined> {
    if (!spent.shared) return counts.refund(spent.bucket, spent.windowEnd, settings.windowMs, spent.max);
    if (!redis || !breaker.allow()) return undefined;
    const before = spent.windowEnd + settings.windowMs / 2 - Date.now();
    try {
      const left = Number(
        await redis.eval(
          REFUND,
          2,
          `${nameSpace}${spent.bucket}`,
          `${nameSpace}refunds:${spent.bucket}`,
          String(Math.floor(before)),
          String(spent.max),
        ),
      );
      breaker.succeeded();
      return left < 0 ? undefined : left;
    } catch (error) {
      rateLimitMetrics.sharedStoreErrors.inc();
      breaker.failed();
      const reason = error instanceof Error ? error.message : String(error);
      outage.failed({ reason, coolDownMs: breaker.coolDownMs });
      return undefined;
    }
  }

  // A cheap 304 does not spend the rate limit (GitHub's rule, narrowed: docs/api.md "Rate limits"): one
  // whose tag the client named and the server had without reading the representation (`refundable`),
  // never `If-None-Match: *`, and at most the limit of them per window, so that a client's requests stay
  // within twice the limit however it polls. Counted when it came in, like every request, so that a client
  // cannot run more than the limit at once, and given back once the answer is known to be 304, in the store
  // that counted it. Its headers show the budget unspent. After the ETag hook (conditional.ts), which turns
  // a 200 into the 304.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 304 || !settings.refundable?.(request)) return payload;
    const spent = charges.get(request);
    if (!spent) return payload;
    charges.delete(request);
    const left = await refund(spent);
    if (left !== undefined) {
      setHeaders(request, reply, { ...spent, remaining: Math.max(0, spent.max - left) });
    }
    return payload;
  });

  const windowSeconds = Math.ceil(settings.windowMs / 1000);
  // Client addresses whose bucket is used up, and when their window ends (ms since the epoch). Kept in this
  // process: with Redis another instance learns it from the first request it counts for that address.
  const spent = new Map<string, number>();
  function remember(bucket: string, until: number): void {
    spent.delete(bucket);
    spent.set(bucket, until);
    if (spent.size <= SPENT_ADDRESSES) return;
    const now = Date.now();
    for (const [key, end] of spent) if (end <= now) spent.delete(key);
    for (const key of spent.keys()) {
      if (spent.size <= SPENT_ADDRESSES) break;
      spent.delete(key);
    }
  }

  function setHeaders(
    request: FastifyRequest,
    reply: FastifyReply,
    counted: { max: number; remaining: number; ttlInSeconds: number },
  ): void {
    const policy = policyOf(request);
    const reset = counted.ttlInSeconds;
    reply.headers({
      'x-ratelimit-limit': String(counted.max),
      'x-ratelimit-remaining': String(counted.remaining),
      'x-ratelimit-reset': String(reset),
      // draft-ietf-httpapi-ratelimit-headers-10/11: the policy, then what is left of it right now.
      'ratelimit-policy': `"${policy}";q=${counted.max};w=${windowSeconds}`,
      ratelimit: `"${policy}";r=${counted.remaining};t=${reset}`,
    });
  }

  function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    counted: { max: number; remaining: number; ttlInSeconds: number; isExceeded: boolean },
  ): void {
    setHeaders(request, reply, counted);
    if (!counted.isExceeded) return;
    const policy = policyOf(request);
    const reset = counted.ttlInSeconds;
    rateLimitMetrics.limited.inc({ policy });
    const per = policy === 'app-user' ? 'app and user' : 'client address';
    throw new ApiError(
      'rate_limited',
      `Too many requests: the limit is ${counted.max} per ${windowSeconds} s for each ${per}. ` +
        `Retry in ${reset} s.`,
      { 'retry-after': String(Math.max(1, reset)) },
    );
  }

  return {
    async apply(request, reply) {
      const counted = await count(request);
      if (!counted) return;
      if (!request.token && counted.remaining === 0)
        remember(addressBucket(request), Date.now() + counted.ttl);
      answer(request, reply, counted);
    },
    refuseSpentAddress(request, reply) {
      const bucket = addressBucket(request);
      const until = spent.get(bucket);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left <= 0) {
        spent.delete(bucket);
        return;
      }
      // Answered as the address's bucket: the token, valid or not, has not been looked at.
      request.token = null;
      const ttlInSeconds = Math.ceil(left / 1000);
      answer(request, reply, { max: settings.max, remaining: 0, ttlInSeconds, isExceeded: true });
    },
  };
}
