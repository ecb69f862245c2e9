// Per client address limits of the OAuth server's paths (docs/oauth.md#limits). Every request under /oauth/
// and /account counts against OAUTH_RATE_LIMIT_MAX per OAUTH_RATE_LIMIT_WINDOW; a step of a flow that may leave
// a row in the store without a sign-in (an authorization request, a device authorization, a code entered, a
// flow resumed) also against OAUTH_FLOWS_PER_ADDRESS per hour. Each such step leaves at most one row, alive
// about an hour, so one address has at most three windows' worth of them alive. Counted as the API counts
// requests without a token (rate-limit.ts: per address, an IPv6 /64; in Redis, shared by every instance, else
// in this process), in buckets of their own. Past a limit the request is answered 429 with Retry-After before
// anything else looks at it: RFC 6749's JSON error on the endpoints apps call, a page on those a browser opens.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { CircuitBreaker } from '../platform/circuit-breaker.ts';
import { ApiError } from '../platform/http/errors.ts';
import { rateLimiter } from '../platform/http/rate-limit.ts';
import { html } from './html.ts';
import { sendPage, tryAgainIn } from './pages.ts';
import type { OAuthLimits } from './settings.ts';

/** The window of the flow steps' count: about the life of what a step leaves (an interaction's hour). */
export const FLOW_WINDOW_MS = 3_600_000;

export interface OAuthLimitSettings {
  limits: OAuthLimits;
  redis: Redis | null;
  redisPrefix: string;
  breaker?: CircuitBreaker;
  outageLogIntervalMs?: number;
}

/** How a path answers: JSON (RFC 6749 errors) or HTML pages. */
export type AnswerShape = 'json' | 'page';

export interface OAuthLimiter {
  /**
   * Counts a request of this address; past a limit answers it with 429 (a page) or throws the 429 (JSON, for
   * the app's error handler). True when the request has been answered.
   */
  admit(
    request: FastifyRequest,
    reply: FastifyReply,
    shape: AnswerShape,
    flowStep: boolean,
  ): Promise<boolean>;
}

export function oauthLimiter(app: FastifyInstance, settings: OAuthLimitSettings): OAuthLimiter {
  const shared = {
    redis: settings.redis,
    breaker: settings.breaker,
    outageLogIntervalMs: settings.outageLogIntervalMs,
  };
  const requests = rateLimiter(app, {
    ...shared,
    max: settings.limits.max,
    windowMs: settings.limits.windowMs,
    redisPrefix: `${settings.redisPrefix}oauth:`,
  });
  const flows = rateLimiter(app, {
    ...shared,
    max: settings.limits.flowsPerHour,
    windowMs: FLOW_WINDOW_MS,
    redisPrefix: `${settings.redisPrefix}oauthflows:`,
  });
  return {
    async admit(request, reply, shape, flowStep) {
      try {
        await requests.apply(request, reply);
        // Its headers, on these requests, tell of the flows' budget, the one that binds here.
        if (flowStep) await flows.apply(request, reply);
        return false;
      } catch (error) {
        if (shape === 'json' || !(error instanceof ApiError)) throw error;
        const wait = Number(error.headers['retry-after'] ?? 1);
        sendPage(
          reply.headers(error.headers),
          429,
          'Too many requests',
          html`<p class="error" role="alert">Too many requests from your network. ${tryAgainIn(wait)}</p>`,
        );
        return true;
      }
    },
  };
}
