// The client's typed errors. ChessportError: the server answered, and not with a success (docs/design.md 17).
// ChessportNetworkError: no complete answer came. Everything else a call throws is the caller's own: the
// reason of their AbortSignal, or a TypeError for a bad argument.
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

/** The server answered, and not with a success (after the client's waits on 429 and retries of 503). */
export class ChessportError extends Error {
  override readonly name = 'ChessportError';
  /** The answer's HTTP status. */
  readonly status: number;
  /**
   * The API's error code; `unexpected_response` when the answer was not in the error shape (a proxy's page).
   */
  readonly error: ErrorCode | 'unexpected_response';
  /** For developers and logs; its wording may change, so match on `error`. */
  readonly error_description: string;
  /** Seconds from the Retry-After header of a 429 or 503, when there was one. */
  readonly retryAfter: number | null;
  /** The answer's X-Request-Id, which the server's log names: quote it when reporting a problem. */
  readonly requestId: string | null;

  constructor(init: {
    status: number;
    error: ErrorCode | 'unexpected_response';
    error_description: string;
    retryAfter?: number | null;
    requestId?: string | null;
  }) {
    super(`${init.status} ${init.error}: ${init.error_description}`);
    this.status = init.status;
    this.error = init.error;
    this.error_description = init.error_description;
    this.retryAfter = init.retryAfter ?? null;
    this.requestId = init.requestId ?? null;
  }
}

/**
 * No complete answer, after the retries: the connection failed (refused, reset, DNS, TLS), no headers came
 * within `timeoutMs`, or the body broke off. `cause` is the last attempt's error as fetch threw it.
 */
export class ChessportNetworkError extends Error {
  override readonly name = 'ChessportNetworkError';
  /** The URL of the GET. The token travels in the Authorization header only, so it is never here. */
  readonly url: string;
  /** Requests the call sent, the first included (429 refusals count too). */
  readonly attempts: number;
  /** The last attempt had no answer headers within `timeoutMs`. */
  readonly timedOut: boolean;
  /** The last attempt's answer had begun, and its body broke off before the end. */
  readonly truncated: boolean;

  constructor(init: {
    url: string;
    attempts: number;
    timedOut: boolean;
    truncated: boolean;
    cause: unknown;
  }) {
    const what = init.truncated
      ? `the answer broke off (${rootMessage(init.cause)})`
      : rootMessage(init.cause);
    const tries = init.attempts === 1 ? '1 attempt' : `${init.attempts} attempts`;
    super(`GET ${init.url} failed after ${tries}: ${what}`, { cause: init.cause });
    this.url = init.url;
    this.attempts = init.attempts;
    this.timedOut = init.timedOut;
    this.truncated = init.truncated;
  }
}

/**
 * The most specific message in a chain of causes: fetch's own is a bare `fetch failed` or `terminated`, its
 * cause says `connect ECONNREFUSED 127.0.0.1:8080`. A failed connect to a name with several addresses is an
 * AggregateError with an empty message: its errors speak instead.
 */
function rootMessage(error: unknown): string {
  let found = '';
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    const { code, library, reason } = current as { code?: unknown; library?: unknown; reason?: unknown };
    const own =
      // OpenSSL's message is a multi-line dump; its library and reason say the same in a few words.
      (typeof library === 'string' && typeof reason === 'string' ? `${library}: ${reason}` : '') ||
      current.message ||
      (current instanceof AggregateError ? current.errors.map((e) => rootMessage(e)).join('; ') : '') ||
      String(code ?? '');
    if (own) found = own;
  }
  // One line, whatever the platform put in it.
  return (found || String(error)).replace(/\s+/g, ' ').trim();
}

const CODES: ReadonlySet<string> = new Set<ErrorCode>(ERROR_CODES);

/**
 * @internal Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); null when absent or
 * unreadable.
 */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^[0-9]+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

/** @internal Reads a failed answer's body into a ChessportError. */
export async function errorFromResponse(response: Response): Promise<ChessportError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const shaped =
    typeof body === 'object' &&
    body !== null &&
    CODES.has((body as { error?: unknown }).error as string) &&
    typeof (body as { error_description?: unknown }).error_description === 'string';
  const common = {
    status: response.status,
    retryAfter: retryAfterSeconds(response.headers),
    requestId: response.headers.get('x-request-id'),
  };
  if (shaped) {
    const { error, error_description } = body as { error: ErrorCode; error_description: string };
    return new ChessportError({ ...common, error, error_description });
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return new ChessportError({
    ...common,
    error: 'unexpected_response',
    error_description: `HTTP ${response.status} ${response.statusText}${snippet ? `: ${snippet}` : ''}`,
  });
}
