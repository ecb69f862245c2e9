// The client's typed error: any answer that is not a success, in the API's error shape (DESIGN.md 17).
import type { ErrorCode } from './types.ts';

export class ChessportError extends Error {
  override readonly name = 'ChessportError';
  readonly status: number;
  /** The API's error code; `unexpected_response` when the answer was not in the error shape (a proxy's page). */
  readonly error: ErrorCode | 'unexpected_response';
  readonly error_description: string;
  /** Seconds from the Retry-After header of a 429 or 503, when there was one. */
  readonly retryAfter: number | null;
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

const CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'invalid_request',
  'invalid_token',
  'insufficient_scope',
  'not_found',
  'method_not_allowed',
  'rate_limited',
  'server_error',
  'unavailable',
]);

/** Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^[0-9]+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

/** Reads a failed answer's body into a ChessportError. */
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
