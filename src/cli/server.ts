// Runs the API until SIGTERM/SIGINT. Shutdown stops accepting connections, lets the requests in flight
// finish (a PGN export streaming for minutes included, up to SHUTDOWN_TIMEOUT), then closes Redis and the
// store and exits 0. A second signal exits at once.
import { resolve } from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import packageJson from '../../package.json' with { type: 'json' };
import { connectRedis, redisAddress, redisReady } from '../platform/redis.ts';
import { type ApiOptions, buildApp } from '../server/app.ts';
import { answersClosed, type LogStream } from '../server/plugins/logging.ts';
import { ANY_OWNER, openStore, type ReplicaEvent, type Store } from '../store/index.ts';
import { DeliveryWorker, type WorkerLog } from '../webhooks/worker.ts';
import { postgresOptions, storeOpening } from './context.ts';
import { CliError } from './errors.ts';
import { inWorkingFolder } from './io.ts';
import { isLoopbackHost, type ServerSettings, type Settings } from './settings.ts';
import type { StopSignals } from './stop-signals.ts';
import { maskUrl, sqliteFiles, storeUrlInWorkingFolder } from './store-url.ts';

/** What the server runs in: the process (`chessport serve`), or a test's process that serves beside its tests. */
export interface ServerHost {
  /** Where the log lines go (default: stdout). */
  logStream?: LogStream;
  /** Ends the server's life once it has stopped, with its exit status. */
  exit(code: number): void;
}

/** A server that listens: its address, and the application (whose connections a test may cut). */
export interface Serving {
  address: string;
  app: FastifyInstance;
}

const PROCESS_HOST: ServerHost = { exit: (code) => process.exit(code) };

/**
 * Serves until a signal. `signals` were caught when the command began: one that came during its start-up
 * (or comes during this one's) stops the server like one that comes later, exit 0.
 */
export async function runServer(
  store: Store,
  settings: Settings,
  server: ServerSettings,
  signals: StopSignals,
  host: ServerHost = PROCESS_HOST,
): Promise<Serving> {
  // The secret may be created (a write) on first start: that still waits as long as the CLI's writers do.
  const secret = settings.secret ?? (await store.accounts.serverSecret());
  // From here on the server only reads. SQLite: WAL readers never wait for writers; what makes them wait is
  // another process holding the store exclusively, and better-sqlite3 waits synchronously, stalling every
  // request. So the wait is short and the request gets 503 `unavailable` instead (PostgreSQL: nothing).
  await store.dialect.limitLockWaits(server.storeBusyTimeoutMs);
  // The API's queries take milliseconds: a connection silent this long has lost its server.
  store.dialect.dropSilentConnections(server.pgAnswerTimeoutMs);
  // The Redis link logs through the app's logger, which exists by the time the link has news.
  const redisLog = {
    info: (details: object, message: string) => app.log.info(details, message),
    warn: (details: object, message: string) => app.log.warn(details, message),
  };
  const redis = settings.redisUrl ? connectRedis(settings.redisUrl, redisLog) : null;
  const oauthOn = oauthServed(settings, server);
  const app = buildApp({ ...apiOptions(store, settings, server, secret, redis), logStream: host.logStream });
  app.log.info(openingDetails(store, settings), openingMessage(store));
  logChangeListener(app.log, store);
  // The API's reads from replicas (docs/operations.md, "Replicas"), logged as each is skipped or taken back.
  if (server.replicas.urls.length > 0 || server.replicas.maxLagSet) {
    await store.useReplicas({
      urls: server.replicas.urls,
      maxLagMs: server.replicas.maxLagMs,
      answerTimeoutMs: server.pgAnswerTimeoutMs,
      poolMax: settings.pgPoolMax,
      onEvent: replicaLogger(app.log),
    });
  }
  let closing = false;
  let webhooks: { worker: DeliveryWorker; store: Store } | undefined;
  const shutdown = async (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      host.exit(1);
      return;
    }
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const deadline = setTimeout(() => {
      app.log.warn('shutdown timeout: closing the connections still open');
      app.server.closeAllConnections();
    }, server.shutdownTimeoutMs);
    // A keep-alive connection whose answer finishes during shutdown would stay open until the client or
    // the keep-alive timeout closes it, holding the exit up: close each one as soon as it is idle.
    const sweeper = setInterval(() => app.server.closeIdleConnections(), 100);
    let code = 0;
    try {
      // The webhook attempts under way finish too (each within its 10 s).
      await Promise.all([app.close(), webhooks?.worker.stop()]);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      code = 1;
    }
    clearInterval(sweeper);
    clearTimeout(deadline);
    // The requests cut at the deadline are logged as their answers close, just after the server does.
    await answersClosed(app, 1000);
    if (redis) {
      await redis.quit().catch(() => undefined);
      // Without an answer from Redis the quit fails, and the client would go on reconnecting: it stops here.
      redis.disconnect();
    }
    await webhooks?.store.close().catch(() => undefined);
    await store.close();
    app.log.info('stopped');
    host.exit(code);
  };
  // From here a signal, also one that came before, stops the server; start-up then goes no further, and
  // waits for shutdown() to end the process.
  signals.handle((signal) => void shutdown(signal));
  const stopped = new Promise<never>(() => undefined);
  if (redis && settings.redisUrl) {
    const ready = await Promise.race([redisReady(redis, 2000), signals.first.then(() => true)]);
    // Fail open: the limits are counted in this process until Redis answers.
    if (!ready) app.log.warn({ redis: redisAddress(settings.redisUrl) }, 'starting without redis');
  }
  if (closing) return stopped;
  let address: string;
  try {
    address = await app.listen({ host: settings.host, port: settings.port });
  } catch (error) {
    if (closing) return stopped; // closed while it started listening
    const message = `cannot listen on ${settings.host} port ${settings.port}: ${listenFailure(error)}`;
    throw new CliError(message, { cause: error });
  }
  if (!oauthOn) {
    app.log.warn(
      { host: settings.host },
      'OAuth is off: set PUBLIC_URL to the https address clients reach this server at (on a host that is not loopback, the server would hand out OAuth codes and tokens over plain http); the API serves operator-issued tokens',
    );
  } else if (server.publicUrl?.startsWith('http:') && !isLoopbackHost(settings.host)) {
    // PUBLIC_URL may be plain http on a loopback address only, but the server answers on every address it
    // listens on: the sign-in pages, passwords, codes and tokens go in the clear to whoever reaches it there.
    app.log.warn(
      { host: settings.host, publicUrl: server.publicUrl },
      'OAuth over plain http on a host that is not loopback: PUBLIC_URL is http, and the sign-in pages, passwords, codes and tokens cross the network unencrypted to whoever reaches this address; listen on 127.0.0.1 (HOST), or put an https proxy in front and set PUBLIC_URL to its address',
    );
  }
  if (closing) return stopped; // stopping: no worker to start
  webhooks = await startWebhooks(store, settings, server, secret, app.log);
  // A signal during the start of the worker found it not yet there to stop: stopped here.
  if (closing) await webhooks.worker.stop();
  return { address, app };
}

/**
 * Whether the OAuth server is on: without PUBLIC_URL the issuer is the listening address, plain http, so on a
 * loopback host only. Elsewhere the API serves CLI tokens as ever, and OAuth stays off until PUBLIC_URL names
 * the https address clients reach (docs/oauth.md).
 */
function oauthServed(settings: Settings, server: ServerSettings): boolean {
  return server.publicUrl !== null || isLoopbackHost(settings.host);
}

/** The application the settings describe: what `chessport serve` builds, and a test that serves in-process. */
export function apiOptions(
  store: Store,
  settings: Settings,
  server: ServerSettings,
  secret: string,
  redis: ReturnType<typeof connectRedis> | null,
): ApiOptions {
  return {
    store,
    secret,
    logLevel: settings.logLevel,
    trustProxy: server.trustProxy,
    pageCacheBytes: server.pageCacheBytes,
    filterTotalMax: server.filterTotalMax,
    requestTimeoutMs: server.requestTimeoutMs,
    idleTimeoutMs: server.idleTimeoutMs,
    outageLogIntervalMs: server.outageLogIntervalMs,
    rateLimit: {
      max: settings.rateLimitMax,
      windowMs: settings.rateLimitWindowMs,
      redis,
      redisPrefix: server.redisPrefix,
    },
    ...(oauthServed(settings, server) && { oauth: { publicUrl: server.publicUrl, settings: server.oauth } }),
    heavy: { limits: server.heavyLimits, leaseTtlMs: server.heavyLeaseTtlMs },
    shedding: { maxEventLoopDelayMs: server.shedEventLoopDelayMs, maxHeapPercent: server.shedHeapPercent },
    streams: {
      maxDurationMs: server.streamMaxDurationMs,
      minBytesPerSecond: server.streamMinBytesPerSecond,
      rateWindowMs: server.streamRateWindowMs,
    },
  };
}

/** PostgreSQL: the connections the webhook worker holds, beside the server's PG_POOL_MAX. */
const WORKER_POOL_MAX = 4;

/**
 * The webhook delivery worker (docs/webhooks.md), on a connection of its own. On SQLite that connection never
 * waits for the write lock (busy_timeout 0; the worker tries again shortly): better-sqlite3 waits
 * synchronously, and a wait for an import's batch would stall every request of the server meanwhile.
 */
async function startWebhooks(
  store: Store,
  settings: Settings,
  server: ServerSettings,
  secret: string,
  log: WorkerLog,
): Promise<{ worker: DeliveryWorker; store: Store }> {
  const own = await openStore(storeUrlInWorkingFolder(settings.databaseUrl), {
    ...postgresOptions(settings),
    migrate: false,
    poolMax: WORKER_POOL_MAX,
  });
  await own.dialect.limitLockWaits(0);
  // PostgreSQL: the connection opened for the checks is setting its lock timeout; once a query has come
  // back, the next setting is not sent while another statement runs on it.
  await own.ping();
  own.dialect.dropSilentConnections(server.pgAnswerTimeoutMs);
  const worker = new DeliveryWorker({
    store: own,
    secret,
    settings: server.webhooks,
    log,
    userAgent: `chessport/${packageJson.version} (webhooks)`,
  });
  worker.start();
  // A commit of any owner's change (this process's, another's through PostgreSQL's NOTIFY or SQLite's poller:
  // the bus that wakes long-polls) wakes the worker at once, between its polls. After stop() a wake does nothing.
  store.signals.subscribe(ANY_OWNER, () => worker.wake());
  return { worker, store: own };
}

/** A replica skipped (a warning: its reads go elsewhere) or taken back. */
function replicaLogger(log: FastifyBaseLogger): (event: ReplicaEvent) => void {
  return (event) => {
    if (event.kind === 'skipped') {
      log.warn(
        { replica: event.name, reason: event.reason, lagSeconds: event.lagSeconds },
        'replica skipped: its reads go to another replica or the primary until it recovers',
      );
    } else {
      log.info({ replica: event.name, lagSeconds: event.lagSeconds }, 'replica serving reads');
    }
  };
}

/**
 * PostgreSQL: the LISTEN connection that wakes long-polls (src/store/postgres/change-listener.ts), logged when
 * it is lost and when it listens again; its retries in between, one line per outage.
 */
function logChangeListener(log: FastifyBaseLogger, store: Store): void {
  let lost = false;
  store.signals.onSourceEvent = (event) => {
    if (event.kind === 'lost' && !lost) {
      lost = true;
      log.warn(
        { reason: event.reason },
        'change listener: connection lost, long-polls wake late until it is back',
      );
    } else if (event.kind === 'listening' && lost) {
      lost = false;
      log.info('change listener: listening again');
    }
  };
}

/** Which store this instance serves and how it found it, without the password: the first line of its log. */
function openingMessage(store: Store): string {
  const { created, upgraded } = storeOpening(store);
  if (created) return 'created a new store';
  if (upgraded.length > 0) return `upgraded the store: applied migrations ${upgraded.join(', ')}`;
  return 'opened the store';
}

/** A SQLite file by its full path (a relative one depends on the working folder); a URL without password. */
function storeName(url: string): string {
  const [file] = sqliteFiles(url);
  return file === undefined ? maskUrl(url) : resolve(inWorkingFolder(file));
}

function openingDetails(store: Store, settings: Settings): Record<string, unknown> {
  const { upgraded } = storeOpening(store);
  return {
    store: storeName(settings.databaseUrl),
    dialect: store.dialect.name,
    ...(upgraded.length > 0 && { migrations: upgraded }),
    // Instances that serve one store must share the secret (docs/operations.md, "Running at scale"): where it comes from.
    secretFrom: settings.secret === null ? 'store' : 'CHESSPORT_SECRET',
    redis: settings.redisUrl === null ? null : redisAddress(settings.redisUrl),
  };
}

function listenFailure(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'EADDRINUSE':
      return 'the port is in use (another server?)';
    case 'EADDRNOTAVAIL':
      return 'no network interface of this machine has that address';
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_AGAIN':
      return 'no such host';
    case 'EACCES':
      return 'permission denied (ports below 1024 need privileges)';
    default:
      return message;
  }
}
