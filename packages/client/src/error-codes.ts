// The API's error codes as the client knows them: the client's one list. The server keeps its own (with
// the statuses, in src/platform/http/errors.ts), as the client shares no code with it; test/client/boundary.test.ts
// checks at compile time that the two lists name the same codes.

/** Every error code of the API (docs/design.md 17), in the order of their HTTP statuses. */
export const ERROR_CODES = [
  'invalid_request',
  'invalid_token',
  'insufficient_scope',
  'not_found',
  'method_not_allowed',
  'rate_limited',
  'server_error',
  'unavailable',
] as const;

/** Every error code of the API (docs/design.md 17). */
export type ErrorCode = (typeof ERROR_CODES)[number];
