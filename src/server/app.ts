// The Fastify application, composed: shared schemas, the error shape everywhere, the /api/v1 routes with their
// OpenAPI document and reference page (src/api) and the OAuth server beside them (src/oauth), and around them
// what production needs (request ids, token-free logs, CORS, compression, ETags, rate limits, probes, metrics).
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { ApiContext } from '../api/context.ts';
import { docsPage } from '../api/docs.ts';
import { FeedWaits } from '../api/feed-waits.ts';
import type { HeavyKind, HeavyLimits } from '../api/heavy-kinds.ts';
import { longAnswers, type StreamLimits } from '../api/long-answers.ts';
import { openapiGenerator, openapiRoute } from '../api/openapi/plugin.ts';
import { DEFAULT_PAGE_CACHE_BYTES, ListPositions, PageCache } from '../api/page-cache.ts';
import { describeParam, paramSchema } from '../api/params.ts';
import { conditionalRequests, isCheapNotModified } from '../api/plugins/conditional.ts';
import { heavyRequests } from '../api/plugins/heavy-requests.ts';
import { routeEveryMethod } from '../api/route.ts';
import { changeRoutes } from '../api/routes/changes.ts';
import { databaseRoutes } from '../api/routes/databases.ts';
import { gameRoutes } from '../api/routes/games.ts';
import { meRoutes } from '../api/routes/me.ts';
import { DEFAULT_FILTER_TOTAL_MAX } from '../api/routes/paging.ts';
import { sharedSchemas } from '../api/schemas.ts';
import { parseZonedTimestamp } from '../api/timestamp.ts';
import { type OAuthSettings, oauthServer } from '../oauth/index.ts';
import type { ThrottleLimits } from '../oauth/throttle.ts';
import { compression, headLikeGet } from '../platform/http/compression.ts';
import { cors } from '../platform/http/cors.ts';
import { ApiError } from '../platform/http/errors.ts';
import { type RateLimitSettings, rateLimiter, redisBreaker } from '../platform/http/rate-limit.ts';
import { OutageLog, requests } from '../platform/outage-log.ts';
import { type Store, storeFault, type TokenInfo } from '../store/index.ts';
import { answerOutsideRoutes, answerRefusedRequests, clientErrorHandler } from './plugins/client-errors.ts';
import { healthRoutes } from './plugins/health.ts';
import { requireHost } from './plugins/host.ts';
import { strictTransportSecurity } from './plugins/hsts.ts';
import { loadShedding, type SheddingSettings } from './plugins/load-shedding.ts';
import { accessLog, type LogStream, loggerOptions, OneLinePerRequest } from './plugins/logging.ts';
import { metrics } from './plugins/metrics.ts';
import { echoRequestId, REQUEST_ID_HEADER, requestId } from './plugins/request-id.ts';
import { streamChunks } from './plugins/stream-chunks.ts';
import { routableUrl } from './request-target.ts';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, timeoutOptions } from './timeouts.ts';

declare module 'fastify' {
  interface FastifyRequest {
    token: TokenInfo | null;
  }
}

export interface ApiOptions {
  store: Store;
  /** Server secret: keys the pairwise user ids and signs feed cursors. */
  secret: string;
  logLevel?: string;
  /** Where the log lines go (default: stdout); a test that serves in-process keeps them apart. */
  logStream?: LogStream;
  /** Fastify's trustProxy: which proxies' X-Forwarded-For names the client (default: none). */
  trustProxy?: boolean | string;
  /** Default: 600 requests per 60 s, counted in this process (docs/design.md 25). */
  rateLimit?: RateLimitSettings;
  /** Bytes of rendered game-list pages kept (page-cache.ts); 0 renders every page. Default 64 MiB. */
  pageCacheBytes?: number;
  /**
   * The most matches a filtered game list counts for its total (api/routes/paging.ts); 0 counts every match.
   * Default 10,000.
   */
  filterTotalMax?: number;
  /** How long a client may take to send a request, head and body (timeouts.ts). Default 30 s. */
  requestTimeoutMs?: number;
  /** How long a connection may see no bytes move before it is closed (timeouts.ts). Default 2 minutes. */
  idleTimeoutMs?: number;
  /** How often an outage of the store or of Redis is summarised in the log (outage-log.ts). Default 10 s. */
  outageLogIntervalMs?: number;
  /** The OAuth authorization server (docs/oauth.md); without it, tokens come from the operator only. */
  oauth?: {
    /** The issuer: the public base URL (PUBLIC_URL); default: the address the server listens on. */
    publicUrl?: string | null;
    settings?: OAuthSettings;
    signInLimits?: ThrottleLimits;
  };
  /**
   * Concurrency limits of heavy requests per kind (heavy-kinds.ts; default 2 PGN exports per app and user, 8
   * per instance), and how long their leases in Redis (rateLimit.redis) live unless renewed (default 30 s).
   */
  heavy?: { limits?: Partial<Record<HeavyKind, HeavyLimits>>; leaseTtlMs?: number };
  /** When heavy requests are shed (load-shedding.ts). Default: event loop 1 s late, heap 80 % full. */
  shedding?: SheddingSettings;
  /** How long a long answer may run, and how slowly its client may read it (long-answers.ts). */
  streams?: StreamLimits;
}

export function buildApp(options: ApiOptions): FastifyInstance {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    requestTimeout,
    connectionTimeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    http: timeoutOptions(requestTimeout),
    logger:
      options.logLevel === 'silent' ? false : loggerOptions(options.logLevel ?? 'info', options.logStream),
    logController: new OneLinePerRequest(),
    // The caller's X-Request-Id when sane, else a UUID; requestId() validates it, so Fastify must not
    // take the header as it is.
    requestIdHeader: false,
    genReqId: requestId,
    trustProxy: options.trustProxy ?? false,
    // During shutdown a request that still arrives on an open connection is answered, in the API's shape,
    // with Connection: close (Fastify's default is a 503 in its own shape).
    return503OnClosing: false,
    // Unknown parameters must fail validation, not vanish (docs/design.md 13).
    // Ids of any length and any bytes must reach the handler, after authentication, and get the same 404 as
    // any other unknown id (docs/design.md 14): no length limit of the router's own (the router answers 400
    // past its limit, before any route; Node's limit on the request head, 16 KiB by default, bounds a path), and a
    // path that does not percent-decode is routed as it is (request-target.ts).
    routerOptions: { maxParamLength: Number.MAX_SAFE_INTEGER },
    rewriteUrl: (raw) => routableUrl(raw.url ?? '/'),
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: true, allErrors: false },
      // `date-time` (the feed's since) as the API reads it: RFC 3339's date-time, and also without seconds or
      // with a zone of hours alone (timestamp.ts), as before the document named the format.
      onCreate: (ajv) => {
        ajv.addFormat('date-time', {
          type: 'string',
          validate: (text) => parseZonedTimestamp(text) !== undefined,
        });
      },
    },
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      sendError(reply, new ApiError('invalid_request', `The request is malformed: ${error.message}`));
    },
  });
  answerOutsideRoutes(app.server);
  app.decorateRequest('token', null);
  routeEveryMethod(app);
  for (const schema of sharedSchemas) app.addSchema(schema);

  const storeOutage = new OutageLog(app.log, STORE_OUTAGE, options.outageLogIntervalMs);
  app.addHook('onClose', async () => storeOutage.close());
  app.setErrorHandler((error: FastifyError, request, reply) => {
    sendError(reply, toApiError(error, request, storeOutage));
  });
  app.setNotFoundHandler((_request, reply) => {
    sendError(reply, unknownPath());
  });

  // Order matters. Instance hooks run in the order added, and before the route-level hooks that
  // @fastify/compress adds: onSend regroups a stream, then computes the ETag on the uncompressed body,
  // then compresses. Every route is registered after compression and CORS, so both apply to it.
  accessLog(app); // first: the hooks after it may end the request
  echoRequestId(app);
  if (options.oauth?.publicUrl?.startsWith('https:')) strictTransportSecurity(app);
  answerRefusedRequests(app); // its onSend first: it may replace an answer
  requireHost(app);
  cors(app);
  compression(app);
  // The not-found route takes every method, and Fastify reads a body before any handler: without this hook
  // a POST of broken JSON to an unknown path would be 400, not 404. So does @fastify/cors's `OPTIONS *`
  // route, which takes an OPTIONS on any path without one of its own (the plugin has already answered a
  // preflight). After CORS, whose headers every API answer carries.
  app.addHook('onRequest', async (request) => {
    if (request.is404 || (request.method === 'OPTIONS' && request.routeOptions.url === '*'))
      throw unknownPath();
  });
  streamChunks(app);
  metrics(app, options.store);
  conditionalRequests(app, options.store, options.secret);
  headLikeGet(app);
  // One Redis serves the rate limits and the heavy requests' leases: one breaker says whether it answers.
  const breaker = redisBreaker();
  const rateLimit = options.rateLimit ?? { max: 600, windowMs: 60_000 };
  const limiter = rateLimiter(app, {
    ...rateLimit,
    outageLogIntervalMs: options.outageLogIntervalMs,
    breaker,
    refundable: isCheapNotModified,
  });
  const heavy = heavyRequests(app, {
    ...options.heavy,
    redis: rateLimit.redis,
    redisPrefix: rateLimit.redisPrefix,
    breaker,
    outageLogIntervalMs: options.outageLogIntervalMs,
    pressure: loadShedding(app, options.shedding),
  });
  healthRoutes(app, options.store, storeOutage);
  // A request whose token was found got an answer from the store: the end of an outage, unless a later
  // query of the same request failed (its 503). Requests that never reach the store tell nothing.
  app.addHook('onResponse', async (request, reply) => {
    if (request.token && reply.statusCode !== 503) storeOutage.succeeded();
  });
  // The generator collects the routes added after it; the document and the page need no token.
  openapiGenerator(app);
  openapiRoute(app);
  docsPage(app);

  const oauth =
    options.oauth &&
    oauthServer(app, {
      store: options.store,
      secret: options.secret,
      issuer: () => options.oauth?.publicUrl ?? listeningUrl(app),
      settings: options.oauth.settings,
      signInLimits: options.oauth.signInLimits,
      redis: options.rateLimit?.redis,
      redisPrefix: options.rateLimit?.redisPrefix,
      breaker,
      outageLogIntervalMs: options.outageLogIntervalMs,
    });

  const waits = new FeedWaits(options.store.signals);
  // Before the server stops taking connections and waits for the requests in flight: a long-poll is
  // answered now, with its empty page, rather than held to the end of its wait.
  app.addHook('preClose', async () => waits.endAll());
  const pages = new PageCache(options.pageCacheBytes ?? DEFAULT_PAGE_CACHE_BYTES);
  const context: ApiContext = {
    store: options.store,
    secret: options.secret,
    limiter,
    heavy,
    longAnswers: longAnswers(options.store, options.streams),
    pages,
    positions: new ListPositions(),
    resourceMetadataUrl: () => oauth?.resourceMetadataUrl(),
    filterTotalMax: options.filterTotalMax ?? DEFAULT_FILTER_TOTAL_MAX,
    waits,
  };
  app.register(
    async (api) => {
      meRoutes(api, context);
      databaseRoutes(api, context);
      gameRoutes(api, context);
      changeRoutes(api, context);
    },
    { prefix: '/api/v1' },
  );
  return app;
}

/** The address the server listens on as a URL: http://127.0.0.1:8080, http://[::1]:8080. */
export function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the server is not listening on TCP');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

const STORE_OUTAGE = {
  down: 'store unavailable',
  more: (count: string, seconds: string) =>
    `store unavailable: ${count} more failed ${requests(count)} in the last ${seconds} s`,
  back: (seconds: string, count: string) =>
    `store available again after ${seconds} s, ${count} ${requests(count)} failed`,
};

const unknownPath = () => new ApiError('not_found', 'There is no such resource.');

function sendError(reply: FastifyReply, error: ApiError): void {
  reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.body());
}

function toApiError(error: FastifyError, request: FastifyRequest, storeOutage: OutageLog): ApiError {
  if (error instanceof ApiError) return error;
  // The docs page's file server refuses what it cannot check (a name too long for the file system, a `.`
  // or empty segment) with a 403 of its own; to a client it is an unknown path like any other.
  if (error.code === 'FST_STATIC_FORBIDDEN_PATH') return unknownPath();
  if (storeFault(error) !== undefined) {
    // One line when the outage begins, then a count every interval (outage-log.ts): not one per request.
    storeOutage.failed({ reason: error.message, code: error.code }, request.log);
    return new ApiError('unavailable', 'The service cannot reach its store right now: retry shortly.', {
      'retry-after': '1',
    });
  }
  if (error.validation) {
    const [first] = error.validation;
    const name = first?.instancePath.replace(/^\//, '') || String(first?.params?.additionalProperty ?? '');
    const schema = request.routeOptions.schema?.querystring as Parameters<typeof paramSchema>[0];
    return new ApiError('invalid_request', describeParam(name, paramSchema(schema, name)));
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode === 404 ? 'not_found' : 'invalid_request', error.message);
  }
  request.log.error({ err: error }, 'request failed');
  return new ApiError('server_error', 'The server failed to answer the request.');
}
