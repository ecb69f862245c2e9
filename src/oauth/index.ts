// The OAuth 2.0 authorization server beside the API (docs/oauth.md): oidc-provider's endpoints, the
// pages that sign users in and ask their consent, /account, and the metadata documents. It lives outside
// /api/v1, which stays GET and HEAD only. The provider is made on the first request that needs it: with
// PORT=0 the issuer (the listening address) is known only once the server listens.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type Provider from 'oidc-provider';
import { SCOPES } from '../domain/scopes.ts';
import type { CircuitBreaker } from '../platform/circuit-breaker.ts';
import type { Store } from '../store/index.ts';
import { accountRoutes } from './account.ts';
import { Browsers } from './browser.ts';
import { developerWebhookRoutes } from './developer-webhooks.ts';
import { developerRoutes } from './developers.ts';
import { html, STYLESHEET, STYLESHEET_PATH } from './html.ts';
import { interactionRoutes } from './interactions.ts';
import { type AnswerShape, oauthLimiter } from './limits.ts';
import {
  AUTHORIZATION_CSP,
  formBodies,
  PAGE_CSP,
  PAGE_HEADERS,
  type PagesContext,
  sendPage,
  tryAgainIn,
} from './pages.ts';
import { personalTokenRoutes } from './personal-tokens.ts';
import { createProvider, derivedKey, OAUTH_ROUTES } from './provider.ts';
import { DEFAULT_OAUTH_SETTINGS, type OAuthSettings } from './settings.ts';
import {
  DEFAULT_DEVICE_CODE_LIMITS,
  DEFAULT_SIGN_IN_LIMITS,
  GuessThrottle,
  type Reservation,
  type ThrottleLimits,
} from './throttle.ts';

export { DEFAULT_OAUTH_SETTINGS, type OAuthSettings } from './settings.ts';

export interface OAuthOptions {
  store: Store;
  secret: string;
  /** The issuer: the server's public base URL, an origin without a trailing slash. */
  issuer: () => string;
  settings?: OAuthSettings;
  /** Shares the counters of the sign-in and code entry throttles and of the limits between instances. */
  redis?: Redis | null;
  redisPrefix?: string;
  /** The Redis circuit breaker the API's limits use (rate-limit.ts). */
  breaker?: CircuitBreaker;
  /** How often an outage of Redis is summarised in the log (outage-log.ts). */
  outageLogIntervalMs?: number;
  signInLimits?: ThrottleLimits;
  /** Wrong user codes on the device code page (throttle.ts). */
  deviceCodeLimits?: ThrottleLimits;
}

export const AUTHORIZATION_SERVER_METADATA = '/.well-known/oauth-authorization-server';
export const PROTECTED_RESOURCE_METADATA = '/.well-known/oauth-protected-resource';

/** The provider's endpoints and the methods they answer; Fastify hands these requests to it untouched. */
const PROVIDER_ENDPOINTS: [('GET' | 'POST' | 'OPTIONS')[], string][] = [
  [['GET'], OAUTH_ROUTES.authorization],
  [['GET'], `${OAUTH_ROUTES.authorization}/:uid`],
  [['POST', 'OPTIONS'], OAUTH_ROUTES.token],
  [['POST', 'OPTIONS'], OAUTH_ROUTES.revocation],
  [['POST', 'OPTIONS'], OAUTH_ROUTES.device_authorization],
  [['GET', 'POST'], OAUTH_ROUTES.code_verification],
  [['GET'], `${OAUTH_ROUTES.code_verification}/:uid`],
  [['GET', 'OPTIONS'], OAUTH_ROUTES.jwks],
  [['GET', 'OPTIONS'], AUTHORIZATION_SERVER_METADATA],
];

/** The provider's endpoints that apps call, which answer JSON (RFC 6749 errors); the others are pages. */
const JSON_ENDPOINTS = new Set([
  OAUTH_ROUTES.token,
  OAUTH_ROUTES.revocation,
  OAUTH_ROUTES.device_authorization,
  OAUTH_ROUTES.jwks,
]);

/**
 * Whether a request is a step of a flow that may leave a row in the store without a sign-in: an authorization
 * request or a device authorization (an interaction, a device code), a device code confirmed (an interaction),
 * a flow resumed (its interaction replaced by one that lives an hour more).
 */
function flowStep(method: string, url: string): boolean {
  if (method === 'POST')
    return url === OAUTH_ROUTES.device_authorization || url === OAUTH_ROUTES.code_verification;
  return (
    method === 'GET' &&
    (url === OAUTH_ROUTES.authorization ||
      url === `${OAUTH_ROUTES.authorization}/:uid` ||
      url === `${OAUTH_ROUTES.code_verification}/:uid`)
  );
}
/** How long the guess throttles wait for Redis before they count in this process alone. */
const THROTTLE_REDIS_TIMEOUT_MS = 5000;

/** How often records past their expiry (codes, sessions, used refresh tokens) are deleted. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

export interface OAuthServer {
  /** The URL of the protected-resource metadata (RFC 9728), which the API's 401 challenges name. */
  resourceMetadataUrl(): string;
}

export function oauthServer(app: FastifyInstance, options: OAuthOptions): OAuthServer {
  const { store } = options;
  let provider: Provider | undefined;
  type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  let callback: Handler | undefined;
  let browsers: Browsers | undefined;
  const browsersOf = () => {
    browsers ??= new Browsers(
      store,
      options.issuer().startsWith('https:'),
      derivedKey(options.secret, 'page csrf'),
    );
    return browsers;
  };
  const providerOf = () => {
    provider ??= createProvider({
      store,
      issuer: options.issuer(),
      secret: options.secret,
      settings: options.settings ?? DEFAULT_OAUTH_SETTINGS,
      browsers: browsersOf(),
      log: app.log,
      wrongUserCode: async (raw) => {
        const entry = codeEntries.get(raw);
        if (entry) entry.wrong = true;
      },
      deviceFormToken: (raw) => formTokens.get(raw),
    });
    return provider;
  };
  // The throttles' own link to Redis, which waits longer for an answer than the rate limits' (redis.ts): a
  // late answer makes an instance count alone (throttle.ts), and a burst of attempts itself makes answers
  // late. The rate limits' link logs Redis outages; this one stays silent.
  const throttleRedis = options.redis?.duplicate({ commandTimeout: THROTTLE_REDIS_TIMEOUT_MS }) ?? null;
  throttleRedis?.on('error', () => undefined);
  app.addHook('onClose', async () => throttleRedis?.disconnect());
  const throttle = new GuessThrottle(
    throttleRedis,
    options.redisPrefix ?? 'chessport:',
    'signin:',
    options.signInLimits ?? DEFAULT_SIGN_IN_LIMITS,
  );
  // The device code page's throttle (RFC 8628 section 5.1): user codes entered per address, and per account
  // when the browser is signed in to chessport, counted before the provider looks the code up. The provider
  // tells of a code it did not find with only the raw request in hand, so each code entry's count is kept
  // here for it; a code entry that looked up no unknown code gives its count back once answered.
  const codeThrottle = new GuessThrottle(
    throttleRedis,
    options.redisPrefix ?? 'chessport:',
    'devicecode:',
    options.deviceCodeLimits ?? DEFAULT_DEVICE_CODE_LIMITS,
  );
  const limiter = oauthLimiter(app, {
    limits: (options.settings ?? DEFAULT_OAUTH_SETTINGS).limits,
    redis: options.redis ?? null,
    redisPrefix: options.redisPrefix ?? 'chessport:',
    breaker: options.breaker,
    outageLogIntervalMs: options.outageLogIntervalMs,
  });
  // Before anything else looks at a request (limits.ts); the metadata documents are not counted.
  const limited =
    (shape: (url: string) => AnswerShape) => async (request: FastifyRequest, reply: FastifyReply) => {
      const url = request.routeOptions.url ?? '';
      if (url === AUTHORIZATION_SERVER_METADATA) return;
      if (await limiter.admit(request, reply, shape(url), flowStep(request.method, url))) return reply;
    };
  // The device code pages' form token of each of their requests: the browser's page CSRF token (provider.ts).
  const formTokens = new WeakMap<IncomingMessage, string>();
  const codeEntries = new WeakMap<IncomingMessage, { reservation: Reservation; wrong: boolean }>();

  app.register(async (scope) => {
    scope.addHook(
      'onRequest',
      limited((url) => (JSON_ENDPOINTS.has(url) ? 'json' : 'page')),
    );
    // The provider reads the bodies itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    for (const [method, url] of PROVIDER_ENDPOINTS) {
      scope.route({
        method,
        url,
        handler: async (request, reply) => {
          // A user code is counted before the provider looks it up, and refused unlooked past the limit.
          let entry: { reservation: Reservation; wrong: boolean } | undefined;
          if (request.method === 'POST' && url === OAUTH_ROUTES.code_verification) {
            const account = (await browsersOf().signedIn(request))?.id;
            const admission = await codeThrottle.reserve(account, request.ip);
            if ('retryAfterS' in admission) {
              const wait = admission.retryAfterS;
              return sendPage(
                reply.header('retry-after', String(wait)),
                429,
                'Connect a device',
                html`<p class="error" role="alert">Too many wrong codes. ${tryAgainIn(wait)}</p>`,
              );
            }
            entry = { reservation: admission.reservation, wrong: false };
            codeEntries.set(request.raw, entry);
          }
          // Gives the browser its CSRF cookie when it has none.
          if (url === OAUTH_ROUTES.code_verification || url === `${OAUTH_ROUTES.code_verification}/:uid`) {
            formTokens.set(request.raw, browsersOf().csrfToken(request, reply));
          }
          // Addressed to the issuer, from the client address Fastify found (TRUST_PROXY): the provider's
          // URLs are the issuer's whatever Host the request came with, and its cookies are Secure over https.
          const issuer = new URL(options.issuer());
          const headers = request.raw.headers;
          headers.host = issuer.host;
          delete headers['x-forwarded-host'];
          headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
          headers['x-forwarded-for'] = request.ip;
          // The headers set so far (X-Request-Id, a cookie) go out with the provider's answer.
          const set = reply.getHeaders();
          reply.hijack();
          for (const [name, value] of Object.entries(set))
            if (value !== undefined) reply.raw.setHeader(name, value);
          for (const [name, value] of Object.entries(PAGE_HEADERS)) reply.raw.setHeader(name, value);
          const authorization =
            url === OAUTH_ROUTES.authorization || url === `${OAUTH_ROUTES.authorization}/:uid`;
          reply.raw.setHeader('content-security-policy', authorization ? AUTHORIZATION_CSP : PAGE_CSP);
          callback ??= providerOf().callback() as Handler;
          await callback(request.raw, reply.raw);
          if (entry && !entry.wrong) await codeThrottle.giveBack(entry.reservation);
        },
      });
    }
  });

  app.register(async (scope) => {
    scope.addHook(
      'onRequest',
      limited(() => 'page'),
    );
    formBodies(scope);
    const context: PagesContext = {
      store,
      get browsers() {
        return browsersOf();
      },
      throttle,
      settings: options.settings ?? DEFAULT_OAUTH_SETTINGS,
    };
    interactionRoutes(scope, context, providerOf);
    accountRoutes(scope, context);
    developerRoutes(scope, context);
    developerWebhookRoutes(scope, context);
    personalTokenRoutes(scope, context);
  });

  app.get(STYLESHEET_PATH, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(STYLESHEET),
  );

  app.get(PROTECTED_RESOURCE_METADATA, async (_request, reply) => {
    const issuer = options.issuer();
    return reply
      .headers({ 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=3600' })
      .send({
        resource: issuer,
        authorization_servers: [issuer],
        scopes_supported: SCOPES,
        bearer_methods_supported: ['header'],
        resource_name: 'chessport API',
        resource_documentation: `${issuer}/docs`,
      });
  });

  const sweeper = setInterval(() => {
    store.oauth.records.deleteExpired().catch((error: unknown) => {
      app.log.warn({ err: error }, 'oauth: could not delete expired records');
    });
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  app.addHook('onClose', async () => clearInterval(sweeper));

  return { resourceMetadataUrl: () => `${options.issuer()}${PROTECTED_RESOURCE_METADATA}` };
}
