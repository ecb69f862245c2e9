// The one error shape of the API (DESIGN.md 17): {error, error_description}, always JSON.

export type ErrorCode =
  | 'invalid_request'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'server_error'
  | 'unavailable';

const statusOf: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  server_error: 500,
  unavailable: 503,
};

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.code = code;
    this.status = statusOf[code];
    this.headers = headers;
  }

  body(): { error: ErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

export const notFound = (what = 'resource') =>
  new ApiError('not_found', `The ${what} does not exist or is not owned by the user.`);
