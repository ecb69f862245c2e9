// Settings from the environment (docs/design.md "Operator interface"); command-line flags override them.
import { isIP, isIPv4 } from 'node:net';
import { totalmem } from 'node:os';
import {
  HEAVY_DEFAULTS,
  HEAVY_KIND_NAMES,
  HEAVY_KINDS,
  type HeavyKind,
  type HeavyLimits,
} from '../api/heavy-kinds.ts';
import { DEFAULT_PAGE_CACHE_BYTES } from '../api/page-cache.ts';
import { DEFAULT_FILTER_TOTAL_MAX } from '../api/routes/paging.ts';
import {
  DEFAULT_OAUTH_SETTINGS,
  DEVELOPER_CONSOLE_MODES,
  type DeveloperConsole,
  type OAuthSettings,
} from '../oauth/settings.ts';
import { DEFAULT_DATABASE_URL, DEFAULT_POOL_MAX, isPostgresUrl, type PoolMode } from '../store/index.ts';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../webhooks/schedule.ts';
import type { WebhookSettings } from '../webhooks/worker.ts';
import { CliError } from './errors.ts';
import { cliIo } from './io.ts';

/** What opening the store needs: all that the store commands read of the environment. */
export interface StoreSettings {
  databaseUrl: string;
  /** PostgreSQL connections this process may open (PG_POOL_MAX); unused with SQLite. */
  pgPoolMax: number;
  /** The LISTEN connection's own URL (DATABASE_LISTEN_URL), past a pooler; unset: the store's URL. */
  pgListenUrl: string | undefined;
  /** The pool mode of a pooler in front of PostgreSQL (PG_POOL_MODE): session (default) or transaction. */
  pgPoolMode: PoolMode;
}

/** The store's settings and the server's (serve, demo). */
export interface Settings extends StoreSettings {
  redisUrl: string | null;
  host: string;
  port: number;
  secret: string | null;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  logLevel: string;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The longest a timer can wait (2^31 - 1 ms): a longer one fires at once. */
const TIMER_MAX_MS = 2 ** 31 - 1;

/** REPLICA_MAX_LAG when unset: a page read from a replica is at most this much older than the primary. */
export const DEFAULT_REPLICA_MAX_LAG_MS = 10_000;

/**
 * DATABASE_REPLICA_URLS: postgres:// URLs separated by commas. Not echoed when refused: they may hold
 * passwords.
 */
export function parseReplicaUrls(text: string): string[] {
  const urls = text.split(',').map((url) => url.trim());
  for (const [i, url] of urls.entries()) {
    if (!/^postgres(ql)?:\/\/[^/]/i.test(url)) {
      throw new CliError(
        `invalid DATABASE_REPLICA_URLS: entry ${i + 1} is not a postgres:// URL; give the replicas' URLs ` +
          'separated by commas, like postgres://user:password@replica1:5432/chessport,postgres://...',
      );
    }
  }
  return urls;
}

/** "90s", "15m", "12h", "30d" to milliseconds; `what` names a setting that a timer waits for (at most 24d). */
export function parseDuration(text: string, what?: string): number {
  const m = /^([1-9][0-9]{0,8})([smhd])$/.exec(text.trim());
  if (!m) throw new CliError(`invalid ${what ?? 'duration'} "${text}": write it like 90s, 15m, 12h or 30d`);
  const ms = Number(m[1]) * (UNITS[m[2] as string] as number);
  if (what !== undefined && ms > TIMER_MAX_MS) throw new CliError(`${what} is at most 24d, got "${text}"`);
  return ms;
}

export function parsePositiveInt(text: string, what: string): number {
  return parseCount(text, what, 1);
}

/** Plain decimal digits without leading zeros, at least `min` (0 or 1). */
export function parseCount(text: string, what: string, min = 0): number {
  const value = /^(0|[1-9][0-9]{0,9})$/.test(text.trim()) ? Number(text) : -1;
  if (value < min)
    throw new CliError(`${what} must be ${min ? 'a positive integer' : 'a whole number'}, got "${text}"`);
  return value;
}

/**
 * The largest game an import checks, in MB (--max-game-size, MAX_GAME_SIZE_MB): at most 512, about V8's longest
 * string, which no game's text can pass anyway.
 */
export function parseMaxGameSizeMb(text: string, what: string): number {
  const mb = parsePositiveInt(text, what);
  if (mb > 512) throw new CliError(`${what} is at most 512 (MB), got "${text}"`);
  return mb;
}

/**
 * The longest login or app name. Each is a unique key, and PostgreSQL refuses an index entry of more than
 * 2704 bytes ("index row size exceeds btree version 4 maximum"), where SQLite took any length: 200
 * characters are at most 800 bytes, on both stores alike.
 */
export const MAX_KEY_NAME_LENGTH = 200;

/** An option's value, refused when empty or only blanks (`--out "$DIR"` with the variable unset). */
export function nonEmpty(text: string, what: string): string {
  if (text.trim() === '') throw new CliError(`${what} must not be empty`);
  return text;
}

// C0 controls (a tab, a line break), DEL and C1 controls. Written as what they are not, as Biome refuses
// C0 characters in a pattern.
const CONTROL = /[^\u0020-\u007e\u00a0-\u{10ffff}]/u;

/**
 * A login or name as given, refused when empty or only blanks (it would be listed as nothing), when it holds
 * a control character (a login "eve<line break>mallory" was listed as two users, eve and mallory), or when
 * longer than `max` characters.
 */
export function parseName(text: string, what: string, max?: number): string {
  nonEmpty(text, what);
  const control = CONTROL.exec(text)?.[0];
  if (control !== undefined) {
    const code = `U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    throw new CliError(`${what} must not hold control characters (it holds ${code})`);
  }
  if (max !== undefined && [...text].length > max)
    throw new CliError(`${what} is at most ${max} characters, got ${[...text].length}`);
  return text;
}

/** The setting `name` of the environment read by `parse`, told the name; `fallback` when it is unset or empty. */
function setting<T, F>(
  env: NodeJS.ProcessEnv,
  name: string,
  parse: (text: string, what: string) => T,
  fallback: F,
): T | F {
  const text = env[name];
  return text ? parse(text, name) : fallback;
}

export function loadStoreSettings(env: NodeJS.ProcessEnv = cliIo().env): StoreSettings {
  return {
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    pgPoolMax: setting(env, 'PG_POOL_MAX', parsePositiveInt, DEFAULT_POOL_MAX),
    pgListenUrl: setting(env, 'DATABASE_LISTEN_URL', parseListenUrl, undefined),
    pgPoolMode: setting(env, 'PG_POOL_MODE', parsePoolMode, 'session'),
  };
}

/** DATABASE_LISTEN_URL: a postgres:// URL (not echoed: it may hold a password). */
export function parseListenUrl(text: string, what: string): string {
  if (!isPostgresUrl(text)) {
    throw new CliError(
      `invalid ${what}: give a postgres:// URL that reaches PostgreSQL directly, not through a pooler in transaction mode`,
    );
  }
  return text;
}

const POOL_MODES: readonly PoolMode[] = ['session', 'transaction'];

/** PG_POOL_MODE: how a pooler in front of PostgreSQL shares its connections, in PgBouncer's words. */
export function parsePoolMode(text: string, what: string): PoolMode {
  const mode = POOL_MODES.find((m) => m === text);
  if (mode === undefined) {
    throw new CliError(
      `invalid ${what} "${text}": use session (PostgreSQL itself, or a pooler in session mode) or transaction (PgBouncer's pool_mode = transaction)`,
    );
  }
  return mode;
}

/**
 * Every setting, checked: for the commands that serve. The others read only loadStoreSettings, so that a
 * REDIS_URL or PORT meant for the server (a bad one included) does not stop `chessport users list`.
 */
export function loadSettings(env: NodeJS.ProcessEnv = cliIo().env): Settings {
  return {
    ...loadStoreSettings(env),
    redisUrl: setting(env, 'REDIS_URL', parseRedisUrl, null),
    host: env.HOST || '127.0.0.1',
    port: setting(env, 'PORT', parsePort, 8080),
    secret: setting(env, 'CHESSPORT_SECRET', parseSecret, null),
    rateLimitMax: setting(env, 'RATE_LIMIT_MAX', parsePositiveInt, 600),
    rateLimitWindowMs: setting(env, 'RATE_LIMIT_WINDOW', parseDuration, 60_000),
    logLevel: setting(env, 'LOG_LEVEL', parseLogLevel, 'info'),
  };
}

/**
 * The shortest CHESSPORT_SECRET: 32 characters. It is the HMAC key of the pairwise user ids and the HKDF input
 * of the feed cursors' keys: anyone with a token holds a cursor sealed under it for their own /me id, against
 * which short secrets can be tried offline until one opens it. 32 random characters carry 128 bits even as
 * hex digits; `openssl rand -base64 32` writes 44 (the secret created in the store is 43).
 */
export const MIN_SECRET_LENGTH = 32;

export function parseSecret(text: string): string {
  if (text.length < MIN_SECRET_LENGTH) {
    // Not echoed, not even its length: it is a secret.
    throw new CliError(
      `CHESSPORT_SECRET is too short to be a secret: give at least ${MIN_SECRET_LENGTH} random characters (make them with: openssl rand -base64 32)`,
    );
  }
  return text;
}

const REDIS_URL_FORM = 'write it like redis://[:password@]host[:port][/db], or rediss:// for TLS';

/**
 * REDIS_URL: a redis:// or rediss:// URL. ioredis reads anything else as a host name or socket path
 * (`http://x` became host "http"), so a mistyped URL started a server that never shares its limits.
 */
export function parseRedisUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not echoed: the text may hold a password.
    throw new CliError(`invalid REDIS_URL: ${REDIS_URL_FORM}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new CliError(`invalid REDIS_URL scheme "${url.protocol}//": ${REDIS_URL_FORM}`);
  }
  if (url.hostname === '') throw new CliError(`invalid REDIS_URL: no host; ${REDIS_URL_FORM}`);
  return text;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function parseLogLevel(text: string): string {
  if (!LOG_LEVELS.includes(text))
    throw new CliError(`invalid LOG_LEVEL "${text}": use ${LOG_LEVELS.join(', ')}`);
  return text;
}

/** `what` names where the text came from (PORT, --port): the environment may hold several settings. */
export function parsePort(text: string, what: string): number {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535))
    throw new CliError(`invalid ${what} "${text}": give a port from 0 to 65535 (0 picks a free one)`);
  return port;
}

/** Operations settings only the server reads (from the environment, like the others). */
export interface ServerSettings {
  /** Key prefix in Redis (REDIS_PREFIX), so deployments or test runs can share one Redis. */
  redisPrefix: string;
  /** How long a store read waits for another process's lock before the request fails with 503. */
  storeBusyTimeoutMs: number;
  /** PostgreSQL: how long a query waits for an answer before its connection is dropped (503). */
  pgAnswerTimeoutMs: number;
  /**
   * The streaming replicas the API's reads go to (DATABASE_REPLICA_URLS, none: the primary reads all) and the
   * replay lag past which one is skipped (REPLICA_MAX_LAG); `maxLagSet` says REPLICA_MAX_LAG was given.
   */
  replicas: { urls: string[]; maxLagMs: number; maxLagSet: boolean };
  /** How long shutdown waits for requests in flight before it cuts their connections. */
  shutdownTimeoutMs: number;
  /** How long a client has to send its whole request (REQUEST_TIMEOUT); undefined: the app's default. */
  requestTimeoutMs: number | undefined;
  /** How long a connection may see no bytes move before it is closed (IDLE_TIMEOUT); undefined: the default. */
  idleTimeoutMs: number | undefined;
  /**
   * Which proxies to believe about the client address (TRUST_PROXY: `true` for any, or addresses and CIDRs
   * such as `loopback, 10.0.0.0/8`). Requests without a valid token are limited per client address, so
   * behind a proxy this must be set, or all of them share the proxy's one limit.
   */
  trustProxy: boolean | string;
  /** Bytes of rendered game-list pages each instance keeps (PAGE_CACHE_MB; 0 turns the cache off). */
  pageCacheBytes: number;
  /** The most matches a filtered game list counts for its total (FILTER_TOTAL_MAX; 0 counts every match). */
  filterTotalMax: number;
  /** How often an outage of the store or of Redis is summarised in the log (OUTAGE_LOG_INTERVAL). */
  outageLogIntervalMs: number | undefined;
  /**
   * The server's public base URL (PUBLIC_URL), the OAuth issuer: an https origin, or http on a loopback
   * address. null: the address it listens on, which must then be a loopback one.
   */
  publicUrl: string | null;
  /**
   * Lifetimes of OAuth tokens (OAUTH_ACCESS_TOKEN_TTL, OAUTH_REFRESH_TOKEN_TTL), and the limits per client
   * address of the OAuth paths (OAUTH_RATE_LIMIT_MAX, OAUTH_RATE_LIMIT_WINDOW, OAUTH_FLOWS_PER_ADDRESS).
   */
  oauth: OAuthSettings;
  /** The webhook delivery worker's (WEBHOOK_*). */
  webhooks: WebhookSettings;
  /** Heavy requests at once per kind: per app and user, per instance (EXPORTS_PER_CLIENT, ...). */
  heavyLimits: Record<HeavyKind, HeavyLimits>;
  /** How long a heavy request's lease in Redis lives unless renewed (HEAVY_LEASE_TTL). */
  heavyLeaseTtlMs: number;
  /** Event-loop delay (ms) above which heavy requests are shed (SHED_EVENT_LOOP_DELAY_MS); 0: never. */
  shedEventLoopDelayMs: number;
  /** Share of the heap limit (percent) above which heavy requests are shed (SHED_HEAP_PERCENT); 0: never. */
  shedHeapPercent: number;
  /** The longest a long answer (the PGN export) may run (STREAM_MAX_DURATION). */
  streamMaxDurationMs: number;
  /** The fewest bytes per second its client must take over each window (STREAM_MIN_RATE); 0: no limit. */
  streamMinBytesPerSecond: number;
  /** The window over which that rate is measured (STREAM_RATE_WINDOW). */
  streamRateWindowMs: number;
}

const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: `true`, `false`, or a comma-separated list of the names above, addresses and CIDRs (an IPv4
 * one may give a netmask: `10.0.0.0/255.0.0.0`). Checked here: the server's proxy-addr throws on the first
 * request otherwise.
 */
export function parseTrustProxy(text: string | undefined): boolean | string {
  if (!text || text === 'false') return false;
  if (text === 'true') return true;
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (!PROXY_RANGES.includes(entry) && !isAddressRange(entry)) {
      throw new CliError(
        `invalid TRUST_PROXY entry "${entry}": use true, or addresses and CIDRs such as "loopback, 10.0.0.0/8"`,
      );
    }
  }
  return text;
}

function isAddressRange(entry: string): boolean {
  const slash = entry.lastIndexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const range = entry.slice(slash + 1);
  if (/^[0-9]{1,3}$/.test(range)) return Number(range) >= 1 && Number(range) <= (family === 4 ? 32 : 128);
  if (family !== 4 || !isIPv4(range)) return false;
  // A netmask: ones, then zeros.
  const bits = range.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const zeros = 2 ** 32 - 1 - bits;
  return bits !== 0 && (zeros & (zeros + 1)) === 0;
}

export function loadServerSettings(env: NodeJS.ProcessEnv = cliIo().env): ServerSettings {
  return {
    redisPrefix: env.REDIS_PREFIX || 'chessport:',
    storeBusyTimeoutMs: setting(env, 'STORE_BUSY_TIMEOUT_MS', parsePositiveInt, 1000),
    pgAnswerTimeoutMs: setting(env, 'PG_ANSWER_TIMEOUT', parseDuration, 30_000),
    replicas: {
      urls: setting(env, 'DATABASE_REPLICA_URLS', parseReplicaUrls, []),
      maxLagMs: setting(env, 'REPLICA_MAX_LAG', parseDuration, DEFAULT_REPLICA_MAX_LAG_MS),
      maxLagSet: Boolean(env.REPLICA_MAX_LAG),
    },
    shutdownTimeoutMs: setting(env, 'SHUTDOWN_TIMEOUT', parseDuration, 30_000),
    requestTimeoutMs: setting(env, 'REQUEST_TIMEOUT', parseDuration, undefined),
    idleTimeoutMs: setting(env, 'IDLE_TIMEOUT', parseDuration, undefined),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    pageCacheBytes: setting(
      env,
      'PAGE_CACHE_MB',
      (text) => parsePageCacheMb(text) * MB,
      DEFAULT_PAGE_CACHE_BYTES,
    ),
    filterTotalMax: setting(env, 'FILTER_TOTAL_MAX', parseCount, DEFAULT_FILTER_TOTAL_MAX),
    outageLogIntervalMs: setting(env, 'OUTAGE_LOG_INTERVAL', parseDuration, undefined),
    publicUrl: setting(env, 'PUBLIC_URL', parsePublicUrl, null),
    oauth: {
      accessTokenTtlS: setting(
        env,
        'OAUTH_ACCESS_TOKEN_TTL',
        (text, what) => parseLifetime(text, what, 86_400),
        DEFAULT_OAUTH_SETTINGS.accessTokenTtlS,
      ),
      refreshTokenTtlS: setting(
        env,
        'OAUTH_REFRESH_TOKEN_TTL',
        (text, what) => parseLifetime(text, what, 365 * 86_400),
        DEFAULT_OAUTH_SETTINGS.refreshTokenTtlS,
      ),
      limits: {
        max: setting(env, 'OAUTH_RATE_LIMIT_MAX', parsePositiveInt, DEFAULT_OAUTH_SETTINGS.limits.max),
        windowMs: setting(
          env,
          'OAUTH_RATE_LIMIT_WINDOW',
          parseDuration,
          DEFAULT_OAUTH_SETTINGS.limits.windowMs,
        ),
        flowsPerHour: setting(
          env,
          'OAUTH_FLOWS_PER_ADDRESS',
          parsePositiveInt,
          DEFAULT_OAUTH_SETTINGS.limits.flowsPerHour,
        ),
      },
      developerConsole: setting(
        env,
        'DEVELOPER_CONSOLE',
        parseDeveloperConsole,
        DEFAULT_OAUTH_SETTINGS.developerConsole,
      ),
      personalTokensNoExpiry: setting(env, 'PERSONAL_TOKENS_NO_EXPIRY', parseSwitch, false),
      webhookAllowPrivate: webhookAllowPrivate(env),
    },
    webhooks: loadWebhookSettings(env),
    heavyLimits: parseHeavyLimits(env),
    heavyLeaseTtlMs: setting(env, 'HEAVY_LEASE_TTL', parseLeaseTtl, HEAVY_DEFAULTS.leaseTtlMs),
    shedEventLoopDelayMs: setting(
      env,
      'SHED_EVENT_LOOP_DELAY_MS',
      parseCount,
      HEAVY_DEFAULTS.shedEventLoopDelayMs,
    ),
    shedHeapPercent: setting(env, 'SHED_HEAP_PERCENT', parsePercent, HEAVY_DEFAULTS.shedHeapPercent),
    streamMaxDurationMs: setting(
      env,
      'STREAM_MAX_DURATION',
      parseDuration,
      HEAVY_DEFAULTS.streamMaxDurationMs,
    ),
    streamMinBytesPerSecond: setting(
      env,
      'STREAM_MIN_RATE',
      parseRate,
      HEAVY_DEFAULTS.streamMinBytesPerSecond,
    ),
    streamRateWindowMs: setting(env, 'STREAM_RATE_WINDOW', parseDuration, HEAVY_DEFAULTS.streamRateWindowMs),
  };
}

/** DEVELOPER_CONSOLE: open, invite or off. */
function parseDeveloperConsole(text: string, what: string): DeveloperConsole {
  const mode = DEVELOPER_CONSOLE_MODES.find((m) => m === text.trim());
  if (mode === undefined) {
    throw new CliError(
      `invalid ${what} "${text}": use open (every user), invite (users marked with chessport users update <login> --developer) or off`,
    );
  }
  return mode;
}

/** A switch: 1 on, 0 off. */
function parseSwitch(text: string, what: string): boolean {
  const value = text.trim();
  if (value === '0') return false;
  if (value === '1') return true;
  throw new CliError(`invalid ${what} "${text}": use 1 (on) or 0 (off)`);
}

/** A token lifetime in whole seconds, from one minute to `maxS`. */
function parseLifetime(text: string, what: string, maxS: number): number {
  let seconds: number;
  try {
    // Not a timer's wait: beyond 24 days is fine.
    seconds = parseDuration(text) / 1000;
  } catch {
    throw new CliError(`invalid ${what} "${text}": write it like 90s, 15m, 12h or 30d`);
  }
  if (seconds < 60 || seconds > maxS) {
    throw new CliError(`${what} must be from 60s to ${maxS / 86_400}d, got "${text}"`);
  }
  return seconds;
}

/** Whether a URL's host is a loopback one: localhost, 127.0.0.0/8 or [::1]. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'));
}

const PUBLIC_URL_FORM =
  'write it like https://chess.example.org (or http://127.0.0.1:8080 on this machine only)';

/**
 * PUBLIC_URL: the origin clients reach the server at, the OAuth issuer. https, or plain http only on a loopback
 * address: codes, tokens and passwords must not cross a network in the clear. No path, query or fragment:
 * the metadata lives at <issuer>/.well-known/..., which a path would move out of the server's reach.
 */
export function parsePublicUrl(text: string): string {
  const url = URL.parse(text);
  if (!url) throw new CliError(`invalid PUBLIC_URL "${text}": ${PUBLIC_URL_FORM}`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CliError(`invalid PUBLIC_URL scheme "${url.protocol}//": ${PUBLIC_URL_FORM}`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new CliError(
      `PUBLIC_URL must be https unless its host is a loopback address (127.0.0.1, [::1], localhost), got "${text}": put the server behind an https proxy and set PUBLIC_URL to its address`,
    );
  }
  if (url.username || url.password || url.search || url.hash || text.includes('#') || url.pathname !== '/') {
    throw new CliError(`PUBLIC_URL must be an origin, without path, query or fragment, got "${text}"`);
  }
  return url.origin;
}

/** The webhook delivery worker's settings (docs/configuration.md#webhooks). */
export function loadWebhookSettings(env: NodeJS.ProcessEnv = cliIo().env): WebhookSettings {
  return {
    allowPrivate: webhookAllowPrivate(env),
    retryScheduleMs: setting(env, 'WEBHOOK_RETRY_SCHEDULE', parseRetrySchedule, DEFAULT_RETRY_SCHEDULE_MS),
    disableAfterMs: setting(env, 'WEBHOOK_DISABLE_AFTER', parseDuration, 3 * 86_400_000),
    pollIntervalMs: setting(
      env,
      'WEBHOOK_POLL_INTERVAL_MS',
      (text, what) => parseBounded(text, what, 60_000),
      250,
    ),
    concurrency: setting(env, 'WEBHOOK_CONCURRENCY', (text, what) => parseBounded(text, what, 1000), 16),
  };
}

/**
 * WEBHOOK_ALLOW_PRIVATE: `1` lets endpoints be http and at any address (a receiver on one's own network, tests);
 * unset, empty or `0`, only https at public addresses. Read by `serve` and by `webhooks add`.
 */
export function webhookAllowPrivate(env: NodeJS.ProcessEnv = cliIo().env): boolean {
  const value = (env.WEBHOOK_ALLOW_PRIVATE ?? '').trim();
  if (value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new CliError(`invalid WEBHOOK_ALLOW_PRIVATE "${value}": use 1 (allow) or 0 (refuse, the default)`);
}

/** The longest WEBHOOK_RETRY_SCHEDULE: the attempts of one delivery. */
const MAX_RETRIES = 50;

/** WEBHOOK_RETRY_SCHEDULE: the waits after each failed attempt, like `5s,5m,30m,2h`. */
export function parseRetrySchedule(text: string): number[] {
  const waits = text.split(',').map((part) => parseDuration(part, 'WEBHOOK_RETRY_SCHEDULE wait'));
  if (waits.length > MAX_RETRIES) {
    throw new CliError(`WEBHOOK_RETRY_SCHEDULE has at most ${MAX_RETRIES} waits, got ${waits.length}`);
  }
  return waits;
}

function parseBounded(text: string, what: string, max: number): number {
  const value = parsePositiveInt(text, what);
  if (value > max) throw new CliError(`${what} is at most ${max}, got "${text}"`);
  return value;
}

/**
 * `<kind>_PER_CLIENT` and `<kind>_PER_INSTANCE` of every kind of heavy request (EXPORTS_PER_CLIENT, ...):
 * positive integers, the first at most the second (a client could never use more than the instance runs).
 */
export function parseHeavyLimits(env: NodeJS.ProcessEnv): Record<HeavyKind, HeavyLimits> {
  const limits = {} as Record<HeavyKind, HeavyLimits>;
  for (const kind of HEAVY_KIND_NAMES) {
    const defined = HEAVY_KINDS[kind];
    const names = { perClient: `${defined.env}_PER_CLIENT`, perInstance: `${defined.env}_PER_INSTANCE` };
    const read = (name: string, fallback: number) => setting(env, name, parsePositiveInt, fallback);
    const perClient = read(names.perClient, defined.perClient);
    const perInstance = read(names.perInstance, Math.max(defined.perInstance, perClient));
    if (perClient > perInstance)
      throw new CliError(
        `${names.perClient} (${perClient}) is more than ${names.perInstance} (${perInstance}): one client could never use it`,
      );
    limits[kind] = { perClient, perInstance };
  }
  return limits;
}

/** HEAVY_LEASE_TTL: at least 3 s, as a lease is renewed every third of it, at most once a second. */
function parseLeaseTtl(text: string): number {
  const ms = parseDuration(text, 'HEAVY_LEASE_TTL');
  if (ms < 3000) throw new CliError(`HEAVY_LEASE_TTL is at least 3s, got "${text}"`);
  return ms;
}

/** A whole number from 0 to 100. */
export function parsePercent(text: string, what: string): number {
  const value = parseCount(text, what);
  if (value > 100) throw new CliError(`${what} is a percentage from 0 to 100, got "${text}"`);
  return value;
}

const RATE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** "4KB/s", "512B/s", "1MB/s" to bytes per second; "0" for none. */
export function parseRate(text: string, what: string): number {
  if (text.trim() === '0') return 0;
  const m = /^([1-9][0-9]{0,8})\s*(B|KB|MB)\/s$/i.exec(text.trim());
  if (!m) throw new CliError(`invalid ${what} "${text}": write it like 4KB/s, 512B/s or 1MB/s (0 for none)`);
  return Number(m[1]) * (RATE_UNITS[(m[2] as string).toLowerCase()] as number);
}

const MB = 1024 * 1024;

/**
 * PAGE_CACHE_MB: at most the memory this process can have (the machine's, or its cgroup's limit when lower).
 * A cache that could never fit is a typo, and 9999999999 MB was not even a whole number of bytes in a double.
 */
export function parsePageCacheMb(text: string): number {
  const mb = parseCount(text, 'PAGE_CACHE_MB');
  const limit = process.constrainedMemory(); // 0, or about 2^64, when there is no limit
  const max = Math.floor(Math.min(totalmem(), limit > 0 ? limit : Number.POSITIVE_INFINITY) / MB);
  if (mb > max)
    throw new CliError(`PAGE_CACHE_MB is at most ${max} (the memory of this machine), got "${text}"`);
  return mb;
}
