// The one error shape of the API (docs/design.md 17): {error, error_description}, always JSON.

/**
 * Every error code of the API and its HTTP status: the server's one list of them. The Error schema's enum
 * (schemas.ts) is read from it; the client writes its own (packages/client/src/error-codes.ts), and
 * test/client/boundary.test.ts checks at compile time that the two name the same codes.
 */
const STATUS_OF = {
  invalid_request: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  server_error: 500,
  unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof STATUS_OF;

/** The codes, in the order of their statuses. */
export const ERROR_CODES = Object.keys(STATUS_OF) as ErrorCode[];

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.code = code;
    this.status = STATUS_OF[code];
    this.headers = headers;
  }

  body(): { error: ErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

export const notFound = (what = 'resource') =>
  new ApiError('not_found', `The ${what} does not exist or is not owned by the user.`);
