// One GET with the client's manners: a bearer token (renewed once on 401 invalid_token when it comes from a
// TokenSource that can), waiting on 429 as Retry-After says, and retrying 503, gateway errors and network
// failures with exponential backoff. Every API call is a GET, so every call is safe to repeat, a body that
// breaks off while it is read included. Only global fetch, setTimeout and AbortSignal: the client runs
// wherever fetch does.
import { type ChessportError, ChessportNetworkError, errorFromResponse } from './errors.ts';
import { checkedToken, type TokenSource } from './token-source.ts';
import { VERSION } from './version.ts';

/** How a call waits and retries. Each field names its default, which the constructor's `retry` changes. */
export interface RetryPolicy {
  /**
   * 503, 502, 504 and network failures (a body broken off included): retries after the first attempt.
   * Default 4.
   */
  maxRetries: number;
  /** First backoff delay; doubled each retry (with jitter) up to maxBackoffMs. Default 500. */
  backoffMs: number;
  /** The longest backoff delay. Default 8000. */
  maxBackoffMs: number;
  /**
   * 429: a Retry-After longer than this is not waited for; the call fails with the 429 instead. Default
   * 120000.
   */
  maxRateLimitWaitMs: number;
  /** 429: how many refusals one call waits through before it fails. Default 20. */
  maxRateLimitRetries: number;
  /**
   * Time to the response headers of one attempt; past it the attempt counts as a network failure. Infinity:
   * no limit. Default 30000.
   */
  timeoutMs: number;
}

/**
 * RetryPolicy values to change; one left out or undefined keeps its default. `onRetry` is told before every
 * wait (the constructor's top-level `onRetry` does the same; give it in one place).
 */
export type RetryOptions = { [Name in keyof RetryPolicy]?: RetryPolicy[Name] | undefined } & {
  onRetry?: ((event: RetryEvent) => void) | undefined;
};

/** RetryPolicy's documentation gives each default. */
const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 4,
  backoffMs: 500,
  maxBackoffMs: 8000,
  maxRateLimitWaitMs: 120_000,
  maxRateLimitRetries: 20,
  timeoutMs: 30_000,
};

/** A wait before the call's next attempt, as onRetry is told of it. */
export interface RetryEvent {
  /** 429; 502, 503 or 504; or no complete answer. */
  reason: 'rate_limited' | 'unavailable' | 'network';
  /** The URL of the GET. */
  url: string;
  /** 1 for the first retry of this call. */
  attempt: number;
  /** How long the client waits now, before the next attempt. */
  waitMs: number;
  /** The answer that caused the retry, or the attempt's network failure. */
  cause: ChessportError | ChessportNetworkError;
}

/** ChessportClient's options (ClientOptions). */
export interface TransportOptions {
  /** The service's address, like https://chess.example.org; the /api/v1 prefix is added. */
  baseUrl: string;
  /**
   * An access token (`cp_...`), sent in the Authorization header only; or a TokenSource, which the client
   * asks for the token of each request and, on 401 `invalid_token`, for a new one (OAuthTokens refreshes an
   * OAuth access token).
   */
  token: string | TokenSource;
  /**
   * Changes to the RetryPolicy's defaults, and who is told of each wait:
   * `{ maxRetries: 2, timeoutMs: 10_000, onRetry: (event) => log(event) }`.
   */
  retry?: RetryOptions | undefined;
  /**
   * Told before every wait: for logs, progress and counting rate-limit pauses. The same as `retry.onRetry`;
   * giving two different functions is a TypeError.
   */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** A replacement for global fetch (a proxy agent, instrumentation, tests). */
  fetch?: typeof fetch | undefined;
  /**
   * Sent as the User-Agent header of every request: name your integration (`acme-sync/2.1`) so that the
   * service's operators can tell its traffic apart. Default `chessport-client/<version>`. Browsers may keep
   * their own.
   */
  userAgent?: string | undefined;
  /**
   * false asks for answers as they are (`Accept-Encoding: identity`): cheaper in CPU on both sides where
   * client and server share a machine or a fast network. Default true: fetch negotiates gzip. Browsers
   * negotiate for themselves either way.
   */
  compression?: boolean | undefined;
}

// Optional fields take undefined too (exactOptionalPropertyTypes), as in PageQuery: `{ signal }` with a
// signal that may be undefined is how callers pass theirs on.
/** What every call takes besides its arguments. */
export interface CallOptions {
  /** Ends the call, its waits included; the call then throws the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** @internal What a fetch Response's body streams. */
type Bytes = Uint8Array<ArrayBuffer>;

/** @internal A successful answer whose body is streamed. */
export interface Download {
  response: Response;
  body: ReadableStream<Bytes>;
  /** The error for a body found faulty while it is read: a ChessportNetworkError, truncated. */
  broken: (cause: unknown) => ChessportNetworkError;
}

/** @internal A successful answer and its body, read whole. */
export interface Answer {
  response: Response;
  text: string;
}

const RETRIED_STATUS = new Set([502, 503, 504]);
/** The longest delay setTimeout keeps; a longer one (Infinity included) fires after 1 ms. */
const TIMER_MAX = 2 ** 31 - 1;

/**
 * The caller's retry values over the defaults. An undefined value keeps the default, as the types allow
 * (`{ timeoutMs: settings.timeout }` without that setting): spread as is, it replaced the default, and every
 * comparison with undefined is false, so `maxRetries: undefined` retried for ever and `timeoutMs: undefined`
 * timed each attempt out after 1 ms. Anything but a number from 0 up (timeoutMs: above 0) is a TypeError.
 */
function retryPolicy(given: RetryOptions = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY };
  for (const name of Object.keys(DEFAULT_RETRY) as (keyof RetryPolicy)[]) {
    const value: unknown = given[name];
    if (value === undefined) continue;
    if (
      typeof value !== 'number' ||
      Number.isNaN(value) ||
      value < 0 ||
      (name === 'timeoutMs' && value === 0)
    )
      throw new TypeError(`retry.${name} must be a number ${name === 'timeoutMs' ? 'above' : 'from'} 0`);
    policy[name] = value;
  }
  return policy;
}

/**
 * The one onRetry of the options: at the top level or inside `retry`, where the documentation shows it (it
 * was read at the top level only, and inside `retry` silently ignored). Anything but a function, or two
 * different functions, is a TypeError.
 */
function retryListener(top: unknown, inRetry: unknown): ((event: RetryEvent) => void) | undefined {
  for (const [name, value] of [
    ['onRetry', top],
    ['retry.onRetry', inRetry],
  ] as const)
    if (value !== undefined && typeof value !== 'function') throw new TypeError(`${name} must be a function`);
  if (top !== undefined && inRetry !== undefined && top !== inRetry)
    throw new TypeError('onRetry is given twice, at the top level and in retry: give it once');
  return (inRetry ?? top) as ((event: RetryEvent) => void) | undefined;
}

/**
 * @internal The User-Agent to send: the caller's, checked as a header value fetch takes, or the client's
 * own.
 */
export function userAgentHeader(given: string | undefined): string {
  if (given === undefined) return `chessport-client/${VERSION}`;
  // fetch refuses a line break with a message quoting the value, and strips the outer whitespace.
  if (typeof given !== 'string' || !/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(given))
    throw new TypeError(
      'userAgent must be printable ASCII, without line breaks or outer spaces, like acme-sync/2.1',
    );
  return given;
}

/** @internal setTimeout as a promise that an abort signal ends early, with the signal's reason. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(ms, TIMER_MAX),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** @internal One GET with the client's manners (see the top of this file). */
export class Transport {
  readonly apiBase: string;
  readonly #tokens: TokenSource;
  readonly #retry: RetryPolicy;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #fetch: typeof fetch;
  readonly #userAgent: string;
  readonly #compression: boolean;

  constructor(options: TransportOptions) {
    // Accept the address with or without the version prefix, with or without a trailing slash.
    const base = options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    const parsed = new URL(base);
    // fetch refuses such a URL with a message that quotes it, password and all: refuse it here, unquoted.
    if (parsed.username || parsed.password)
      throw new TypeError(
        'the base URL must not carry a user name or password; the token is sent as a header',
      );
    // Refused here rather than by every call: another scheme failed each call only after all its retries, and
    // a query or fragment ended up in front of every path (`https://host/?a=1/api/v1/me`).
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw new TypeError('the base URL must be an http: or https: URL');
    if (/[?#]/.test(parsed.href))
      throw new TypeError('the base URL must not carry a query or a fragment; the client adds the paths');
    this.apiBase = `${parsed.href.replace(/\/+$/, '')}/api/v1`;
    const given: unknown = options.token;
    if (typeof given === 'object' && given !== null) {
      const source = given as TokenSource;
      if (
        typeof source.accessToken !== 'function' ||
        !['function', 'undefined'].includes(typeof source.refresh)
      )
        throw new TypeError('a token source has an accessToken() method, and may have refresh()');
      this.#tokens = source;
    } else {
      const token = checkedToken(given);
      this.#tokens = { accessToken: () => token };
    }
    this.#retry = retryPolicy(options.retry);
    this.#onRetry = retryListener(options.onRetry, options.retry?.onRetry);
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#userAgent = userAgentHeader(options.userAgent);
    this.#compression = options.compression ?? true;
  }

  /** The absolute URL of an API path such as `/games?limit=10`. */
  url(path: string): string {
    return `${this.apiBase}${path}`;
  }

  /**
   * A Link target as a URL under the API's base. The server writes them root-relative (`/api/v1/games?...`):
   * behind a path prefix (`https://host/x/api/v1`) they go under it. Anything else is null.
   */
  underApi(target: string): string | null {
    const url = new URL(target);
    const base = new URL(this.apiBase);
    if (
      url.origin === base.origin &&
      !url.pathname.startsWith(`${base.pathname}/`) &&
      url.pathname.startsWith('/api/v1/')
    )
      return `${this.apiBase}${url.pathname.slice('/api/v1'.length)}${url.search}`;
    return this.#isUnderApi(url.href) ? url.href : null;
  }

  /** Whether the URL is under the API's base: the token goes nowhere else, also following a Link. */
  #isUnderApi(url: string): boolean {
    const { origin, pathname, username, password } = new URL(url);
    const base = new URL(this.apiBase);
    return origin === base.origin && pathname.startsWith(`${base.pathname}/`) && !username && !password;
  }

  /**
   * A successful answer to GET url with its body read whole; or ChessportError, ChessportNetworkError.
   * heldMs: how long the server may hold the request before it answers (a long-poll), added to the
   * attempt's timeout.
   */
  async text(url: string, accept: string, options: CallOptions = {}, heldMs = 0): Promise<Answer> {
    return this.#get(
      url,
      accept,
      options.signal,
      async (response) => ({ response, text: await response.text() }),
      heldMs,
    );
  }

  /**
   * A successful answer to GET url with its body as a stream of bytes, for downloads too large to hold. A
   * failure while the stream is read is a ChessportNetworkError (truncated), not retried: part of the body
   * has been handed out.
   */
  async stream(url: string, accept: string, options: CallOptions = {}): Promise<ReadableStream<Bytes>> {
    return (await this.download(url, accept, options)).body;
  }

  /**
   * As stream(), with the answer's headers and status, and a `broken` that makes the error a read ends in
   * when the body itself is faulty (it ended inside a line): a ChessportNetworkError (truncated) like a body
   * that broke off.
   */
  async download(url: string, accept: string, options: CallOptions = {}): Promise<Download> {
    const { signal } = options;
    let attempts = 0;
    const response = await this.#get(url, accept, signal, async (answer, n) => {
      attempts = n;
      return answer;
    });
    const broken = (cause: unknown) => this.#failure(url, attempts, cause, true);
    const body = response.body
      ? typedFailures(response.body, (error) => (signal?.aborted ? signal.reason : broken(error)))
      : new ReadableStream<Bytes>({ start: (controller) => controller.close() });
    return { response, body, broken };
  }

  async #get<T>(
    url: string,
    accept: string,
    signal: AbortSignal | undefined,
    read: (response: Response, attempts: number) => Promise<T>,
    heldMs = 0,
  ): Promise<T> {
    if (!this.#isUnderApi(url)) throw new TypeError(`refusing to send the token outside ${this.apiBase}`);
    const policy = this.#retry;
    let attempts = 0;
    let failures = 0;
    let refusals = 0;
    let refreshed = false;
    const retryOrThrow = async (error: unknown, truncated: boolean) => {
      // The caller's abort is theirs, as the platform has it: their signal's reason, not a network failure.
      if (signal?.aborted) throw signal.reason;
      const failure = this.#failure(url, attempts, error, truncated);
      if (failures >= policy.maxRetries) throw failure;
      failures++;
      const waitMs = this.#backoff(failures);
      await this.#wait({ reason: 'network', url, attempt: failures, waitMs, cause: failure }, signal);
    };
    for (;;) {
      signal?.throwIfAborted();
      const token = await this.#accessToken(signal);
      attempts++;
      let response: Response;
      try {
        response = await this.#attempt(url, accept, token, signal, heldMs);
      } catch (error) {
        await retryOrThrow(error, false);
        continue;
      }
      if (response.ok) {
        try {
          return await read(response, attempts);
        } catch (error) {
          await retryOrThrow(error, true);
          continue;
        }
      }
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
      if (response.status === 401 && this.#tokens.refresh && !refreshed) {
        const refusal = await errorFromResponse(response);
        if (refusal.error !== 'invalid_token') throw refusal;
        // Once per call: a source whose new token is refused too has nothing better to give.
        refreshed = true;
        await untilAborted(this.#tokens.refresh(token), signal);
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

  #failure(url: string, attempts: number, error: unknown, truncated: boolean): ChessportNetworkError {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    return new ChessportNetworkError({ url, attempts, timedOut, truncated, cause: error });
  }

  /** The token of the next request, from the source, checked as the constructor checks a string. */
  async #accessToken(signal: AbortSignal | undefined): Promise<string> {
    const token = await untilAborted(Promise.resolve(this.#tokens.accessToken()), signal);
    return checkedToken(token, 'the token source gave no usable token: ');
  }

  async #attempt(
    url: string,
    accept: string,
    token: string,
    signal: AbortSignal | undefined,
    heldMs: number,
  ): Promise<Response> {
    // The timeout covers the wait for the headers only: a long PGN download is not cut off. Its reason is a
    // TimeoutError DOMException, as AbortSignal.timeout() gives. One beyond setTimeout's range (Infinity)
    // means none. A long-poll's headers come only when the server stops holding it: heldMs later.
    const timeout = new AbortController();
    const timeoutMs = this.#retry.timeoutMs + heldMs;
    const timer =
      timeoutMs <= TIMER_MAX
        ? setTimeout(
            () => timeout.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
            timeoutMs,
          )
        : undefined;
    try {
      return await this.#fetch(url, {
        headers: {
          authorization: `Bearer ${token}`,
          accept,
          'user-agent': this.#userAgent,
          ...(!this.#compression && { 'accept-encoding': 'identity' }),
        },
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

/**
 * @internal `promise`, or the signal's reason once it is aborted: the caller stops waiting, and the work goes
 * on (a refresh shared by several calls must not be cut off by one of them: its answer is a new token).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** The same bytes, with the error a failed read ends in replaced by `typed(error)`. */
function typedFailures(
  body: ReadableStream<Bytes>,
  typed: (error: unknown) => unknown,
): ReadableStream<Bytes> {
  const reader = body.getReader();
  return new ReadableStream<Bytes>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(typed(error));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
