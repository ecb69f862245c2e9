// One GET with the client's manners: a bearer token, waiting on 429 as Retry-After says, and retrying 503,
// gateway errors and network failures with exponential backoff. Every API call is a GET, so every call is
// safe to repeat. Only global fetch, setTimeout and AbortSignal: the client runs wherever fetch does.
import { type ChessportError, errorFromResponse } from './errors.ts';

export interface RetryPolicy {
  /** 503, 502, 504 and network failures: retries after the first attempt. */
  maxRetries: number;
  /** First backoff delay; doubled each retry (with jitter) up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** 429: a Retry-After longer than this is not waited for; the call fails with the 429 instead. */
  maxRateLimitWaitMs: number;
  /** 429: how many refusals one call waits through before it fails. */
  maxRateLimitRetries: number;
  /** Time to the response headers of one attempt; past it the attempt counts as a network failure. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 4,
  backoffMs: 500,
  maxBackoffMs: 8000,
  maxRateLimitWaitMs: 120_000,
  maxRateLimitRetries: 20,
  timeoutMs: 30_000,
};

export interface RetryEvent {
  reason: 'rate_limited' | 'unavailable' | 'network';
  url: string;
  /** 1 for the first retry of this call. */
  attempt: number;
  waitMs: number;
  /** The answer that caused the retry, or the network error. */
  cause: ChessportError | Error;
}

export interface TransportOptions {
  /** The service's address, like https://chess.example.org; the /api/v1 prefix is added. */
  baseUrl: string;
  token: string;
  retry?: Partial<RetryPolicy>;
  /** Told before every wait: for logs, progress and counting rate-limit pauses. */
  onRetry?: (event: RetryEvent) => void;
  /** A replacement for global fetch (a proxy agent, instrumentation, tests). */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

const RETRIED_STATUS = new Set([502, 503, 504]);

/** setTimeout as a promise that an abort signal ends early, with the signal's reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  readonly apiBase: string;
  readonly #token: string;
  readonly #retry: RetryPolicy;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: TransportOptions) {
    // Accept the address with or without the version prefix, with or without a trailing slash.
    const base = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.apiBase = `${new URL(base).href.replace(/\/+$/, '')}/api/v1`;
    if (!options.token) throw new TypeError('a token is needed');
    this.#token = options.token;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#onRetry = options.onRetry;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The absolute URL of an API path such as `/games?limit=10`. */
  url(path: string): string {
    return `${this.apiBase}${path}`;
  }

  /**
   * A Link target as a URL under the API's base. The server writes them root-relative (`/api/v1/games?...`):
   * behind a path prefix (`https://host/x/api/v1`) they go under it. Anything else is refused.
   */
  underApi(target: string): string {
    const url = new URL(target);
    const base = new URL(this.apiBase);
    if (
      url.origin === base.origin &&
      !url.pathname.startsWith(`${base.pathname}/`) &&
      url.pathname.startsWith('/api/v1/')
    )
      return `${this.apiBase}${url.pathname.slice('/api/v1'.length)}${url.search}`;
    return this.#checked(url.href);
  }

  /** The URL itself when it is under the API's base: the token goes nowhere else, also following a Link. */
  #checked(url: string): string {
    const { origin, pathname } = new URL(url);
    const base = new URL(this.apiBase);
    if (origin !== base.origin || !pathname.startsWith(`${base.pathname}/`))
      throw new TypeError(`refusing to send the token outside ${this.apiBase}: ${url}`);
    return url;
  }

  /** A successful answer to GET url (its body not yet read), or a ChessportError. */
  async get(url: string, accept: string, options: CallOptions = {}): Promise<Response> {
    this.#checked(url);
    const { signal } = options;
    const policy = this.#retry;
    let failures = 0;
    let refusals = 0;
    for (;;) {
      signal?.throwIfAborted();
      let response: Response;
      try {
        response = await this.#attempt(url, accept, signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (failures >= policy.maxRetries) throw error;
        failures++;
        await this.#wait(
          {
            reason: 'network',
            url,
            attempt: failures,
            waitMs: this.#backoff(failures),
            cause: error as Error,
          },
          signal,
        );
        continue;
      }
      if (response.ok) return response;
      if (response.status === 429) {
        const refusal = await errorFromResponse(response);
        const reset = Number(response.headers.get('x-ratelimit-reset'));
        const seconds = refusal.retryAfter ?? (Number.isFinite(reset) && reset > 0 ? reset : null);
        // Without a usable Retry-After (absent, or 0 from a misbehaving proxy), back off instead of spinning.
        const waitMs = seconds ? seconds * 1000 : this.#backoff(refusals + 1);
        if (waitMs > policy.maxRateLimitWaitMs || refusals >= policy.maxRateLimitRetries) throw refusal;
        refusals++;
        await this.#wait({ reason: 'rate_limited', url, attempt: refusals, waitMs, cause: refusal }, signal);
        continue;
      }
      if (RETRIED_STATUS.has(response.status) && failures < policy.maxRetries) {
        const failure = await errorFromResponse(response);
        failures++;
        const asked = (failure.retryAfter ?? 0) * 1000;
        const waitMs = Math.min(Math.max(asked, this.#backoff(failures)), policy.maxRateLimitWaitMs);
        await this.#wait({ reason: 'unavailable', url, attempt: failures, waitMs, cause: failure }, signal);
        continue;
      }
      throw await errorFromResponse(response);
    }
  }

  async #attempt(url: string, accept: string, signal: AbortSignal | undefined): Promise<Response> {
    // The timeout covers the wait for the headers only: a long PGN download is not cut off.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new Error(`no answer within ${this.#retry.timeoutMs} ms`)),
      this.#retry.timeoutMs,
    );
    try {
      return await this.#fetch(url, {
        headers: { authorization: `Bearer ${this.#token}`, accept },
        signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
      });
    } catch (error) {
      throw timeout.signal.aborted ? timeout.signal.reason : error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Exponential backoff, half of it random ("equal jitter"), so that clients do not retry in step. */
  #backoff(attempt: number): number {
    const ceiling = Math.min(this.#retry.maxBackoffMs, this.#retry.backoffMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  async #wait(event: RetryEvent, signal: AbortSignal | undefined): Promise<void> {
    this.#onRetry?.(event);
    await sleep(event.waitMs, signal);
  }
}
