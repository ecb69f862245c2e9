// Where the client's access token comes from: a fixed string, or a source that renews it when the API refuses
// it (OAuthTokens, oauth-tokens.ts, is one: it refreshes with an OAuth refresh token).

/**
 * Where the client gets the access token of each request, and a new one when the API refuses it with 401
 * `invalid_token` (expired or revoked). The client asks `accessToken()` before every request, so a source
 * may renew its token ahead of time.
 */
export interface TokenSource {
  /** The access token to send now. */
  accessToken(): string | Promise<string>;
  /**
   * A new access token, after the API answered 401 `invalid_token` to `rejected`. The client calls it at most
   * once per call, then repeats the request once with the token it returns; a refusal of that one is thrown.
   * Several calls may be refused at the same time, each with the same `rejected`: a source refreshes once for
   * all of them (and returns its current token at once when it is no longer `rejected`). What it throws
   * (OAuthTokens: a ChessportOAuthError) is what the call throws. Without `refresh`, the 401 is thrown.
   */
  refresh?(rejected: string): Promise<string>;
}

/**
 * @internal A bearer token as fetch sends it, or a TypeError that does not quote it; `from` names where a
 * token that is not the constructor's came from.
 */
export function checkedToken(given: unknown, from = ''): string {
  if (typeof given !== 'string' || given === '') throw new TypeError(`${from}a token is needed`);
  // fetch strips the outer whitespace of a header value (a token read from a file ends with a newline), and
  // refuses a value with a line break inside, quoting it: the token would end up in an error message.
  const token = given.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new TypeError(`${from}the token must be printable ASCII without spaces or line breaks`);
  return token;
}
