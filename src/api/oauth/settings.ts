// The OAuth settings with their defaults, in a module of their own: the CLI reads them at every start, and
// must not load the authorization server to do so.

export interface OAuthSettings {
  /** Lifetime of an access token in seconds (OAUTH_ACCESS_TOKEN_TTL). */
  accessTokenTtlS: number;
  /** Lifetime of a refresh token in seconds; each refresh gives a new one (OAUTH_REFRESH_TOKEN_TTL). */
  refreshTokenTtlS: number;
}

export const DEFAULT_OAUTH_SETTINGS: OAuthSettings = {
  accessTokenTtlS: 3600,
  refreshTokenTtlS: 30 * 86_400,
};
