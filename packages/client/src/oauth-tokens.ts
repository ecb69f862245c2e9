// An OAuth access token that renews itself: a TokenSource holding the access and refresh tokens, which
// refreshes with `grant_type=refresh_token` (RFC 6749 section 6) when the API refuses the access token or
// it is about to expire. chessport rotates refresh tokens and revokes the grant when a used one comes back,
// so: one refresh at a time (concurrent refusals share it), the new pair handed to `onTokens` to be saved
// before the call goes on, and no retry of a refresh whose answer was lost.
import { ChessportOAuthError } from './errors.ts';
import {
  discoverAuthorizationServer,
  type OAuthClient,
  type OAuthHttpOptions,
  postForm,
} from './oauth-http.ts';
import type { TokenSource } from './token-source.ts';

/** What the token endpoint gave: what an app saves between runs. */
export interface TokenSet {
  accessToken: string;
  /** null when the server issued none: the access token then cannot be renewed. */
  refreshToken: string | null;
  /** When the access token expires, in milliseconds since the epoch (from `expires_in`); null: unknown. */
  expiresAt: number | null;
  /** The scopes granted, space-separated; null when the server did not say. */
  scope: string | null;
}

/** OAuthTokens' options: the app's client, the tokens, and where to refresh them. */
export interface OAuthTokensOptions extends OAuthClient, OAuthHttpOptions {
  /** The tokens as the token endpoint last gave them (the app's saved copy). */
  tokens: TokenSet;
  /** The token endpoint, like `https://chess.example.org/oauth/token`; or give `issuer`. */
  tokenEndpoint?: string | undefined;
  /**
   * The server's address, like `https://chess.example.org`, whose metadata (RFC 8414) names the token
   * endpoint; read at the first refresh.
   */
  issuer?: string | undefined;
  /**
   * Told of each new pair, and awaited before the new access token is used: save it here, replacing the
   * saved copy (write a new file and rename it over the old one). The old refresh token is spent: sent
   * again, it revokes the grant. What it throws is what the call throws; the tokens stay the new ones.
   */
  onTokens?: ((tokens: TokenSet) => void | Promise<void>) | undefined;
}

/** How long before its expiry an access token is refreshed ahead of use. */
const EARLY_MS = 10_000;

/** The access and refresh tokens of one grant, refreshed as needed; pass it as the client's `token`. */
export class OAuthTokens implements TokenSource {
  #tokens: TokenSet;
  readonly #client: OAuthClient;
  readonly #http: OAuthHttpOptions;
  readonly #onTokens: OAuthTokensOptions['onTokens'];
  #endpoint: Promise<string> | undefined;
  readonly #issuer: string | undefined;
  #refreshing: Promise<string> | undefined;
  /** A refusal of the refresh token (invalid_grant ...): every later refresh fails with it, unsent. */
  #refused: ChessportOAuthError | undefined;

  /** Checks its arguments at once (a TypeError) and sends nothing until a refresh. */
  constructor(options: OAuthTokensOptions) {
    if (typeof options.clientId !== 'string' || options.clientId === '')
      throw new TypeError('a client id is needed');
    if (options.tokenEndpoint === undefined && options.issuer === undefined)
      throw new TypeError('give the token endpoint, or the issuer whose metadata names it');
    this.#tokens = checkedTokens(options.tokens);
    this.#client = { clientId: options.clientId, clientSecret: options.clientSecret };
    this.#http = { fetch: options.fetch, userAgent: options.userAgent, timeoutMs: options.timeoutMs };
    this.#onTokens = options.onTokens;
    this.#issuer = options.issuer;
    if (options.tokenEndpoint !== undefined) this.#endpoint = Promise.resolve(options.tokenEndpoint);
  }

  /** The current tokens, the last refresh's once there was one. */
  get tokens(): TokenSet {
    return { ...this.#tokens };
  }

  /** The current access token, refreshed first when it expires within seconds. */
  async accessToken(): Promise<string> {
    const { accessToken, expiresAt, refreshToken } = this.#tokens;
    if (expiresAt !== null && refreshToken !== null && Date.now() >= expiresAt - EARLY_MS)
      return this.refresh(accessToken);
    return accessToken;
  }

  /**
   * A new access token from the refresh token; the current one at once when it is no longer `rejected` (a
   * refresh for another call came first). Concurrent calls share one request. Throws ChessportOAuthError:
   * `invalid_grant` when the refresh token has expired, has been revoked or was used before (the user must
   * sign in again; later calls fail the same way without a request); ChessportNetworkError when no answer
   * came (not retried: the refresh token may have been used; the next call tries again).
   */
  refresh(rejected?: string): Promise<string> {
    if (rejected !== undefined && rejected !== this.#tokens.accessToken)
      return Promise.resolve(this.#tokens.accessToken);
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #refresh(): Promise<string> {
    if (this.#refused) throw this.#refused;
    const { refreshToken } = this.#tokens;
    if (refreshToken === null)
      throw new TypeError('the access token was refused, and there is no refresh token to renew it');
    const endpoint = await this.#tokenEndpoint();
    let answer: Record<string, unknown>;
    try {
      answer = await postForm(
        endpoint,
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        this.#client,
        this.#http,
      );
    } catch (error) {
      if (error instanceof ChessportOAuthError && error.error !== 'unexpected_response') {
        this.#refused = error;
      }
      throw error;
    }
    // A server that issues no new refresh token keeps the old one valid (RFC 6749 section 6).
    this.#tokens = tokenSet(answer, endpoint, this.#tokens);
    await this.#onTokens?.(this.tokens);
    return this.#tokens.accessToken;
  }

  #tokenEndpoint(): Promise<string> {
    const issuer = this.#issuer as string;
    // A failed discovery is tried again at the next refresh.
    this.#endpoint ??= discoverAuthorizationServer(issuer, this.#http).then(
      (metadata) => metadata.token_endpoint,
      (error: unknown) => {
        this.#endpoint = undefined;
        throw error;
      },
    );
    return this.#endpoint;
  }
}

/**
 * @internal A token endpoint's successful answer (RFC 6749 5.1) as a TokenSet; `previous` keeps its refresh token and
 * scope where the answer has none. Throws ChessportOAuthError `unexpected_response` for an answer without a
 * bearer access token.
 */
export function tokenSet(
  answer: Record<string, unknown>,
  endpoint: string,
  previous?: TokenSet,
  now = Date.now(),
): TokenSet {
  const { access_token, token_type, refresh_token, expires_in, scope } = answer;
  const wrong = (what: string) =>
    new ChessportOAuthError({ status: 200, error: 'unexpected_response', error_description: what, endpoint });
  if (typeof access_token !== 'string' || !/^[\x21-\x7e]+$/.test(access_token))
    throw wrong('the answer has no usable access_token');
  if (typeof token_type !== 'string' || token_type.toLowerCase() !== 'bearer')
    throw wrong(`the token_type is ${JSON.stringify(token_type)}, not Bearer`);
  if (
    refresh_token !== undefined &&
    (typeof refresh_token !== 'string' || !/^[\x21-\x7e]+$/.test(refresh_token))
  )
    throw wrong('the refresh_token is not a token');
  return {
    accessToken: access_token,
    refreshToken: typeof refresh_token === 'string' ? refresh_token : (previous?.refreshToken ?? null),
    expiresAt:
      typeof expires_in === 'number' && Number.isFinite(expires_in) && expires_in >= 0
        ? now + expires_in * 1000
        : null,
    scope: typeof scope === 'string' ? scope : (previous?.scope ?? null),
  };
}

function checkedTokens(given: TokenSet): TokenSet {
  const token = (value: unknown) => typeof value === 'string' && /^[\x21-\x7e]+$/.test(value);
  if (typeof given !== 'object' || given === null || !token(given.accessToken))
    throw new TypeError('tokens.accessToken must be a token: printable ASCII without spaces');
  if (given.refreshToken !== null && !token(given.refreshToken))
    throw new TypeError('tokens.refreshToken must be a token or null');
  if (given.expiresAt !== null && !Number.isFinite(given.expiresAt))
    throw new TypeError('tokens.expiresAt must be milliseconds since the epoch, or null');
  return {
    accessToken: given.accessToken,
    refreshToken: given.refreshToken ?? null,
    expiresAt: given.expiresAt ?? null,
    scope: given.scope ?? null,
  };
}
