// The Redis connection behind shared rate-limit counters. It must never hold a request up: commands fail
// at once while the link is down (no offline queue, no retries) and the limiter falls back to local counters.
import { Redis } from 'ioredis';

export interface RedisLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** host:port only: a URL may carry a password, which must not reach the logs. */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'redis';
  }
}

export function connectRedis(url: string, log: RedisLog): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    // Keep reconnecting for as long as the process runs, at most every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  const address = redisAddress(url);
  let down = false;
  // ioredis emits an error per failed reconnect; one line per outage is enough.
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.warn({ redis: address, reason: error.message }, 'redis unreachable');
  });
  redis.on('ready', () => {
    if (down) log.info({ redis: address }, 'redis reachable again');
    down = false;
  });
  return redis;
}

/** Resolves when the connection is ready, or after timeoutMs (the service starts without Redis). */
export async function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), timeoutMs);
    const onReady = () => done(true);
    function done(ready: boolean) {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    }
    redis.once('ready', onReady);
  });
}
