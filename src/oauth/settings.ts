// The OAuth settings with their defaults, in a module of their own: the CLI reads them at every start, and
// must not load the authorization server to do so.

export interface OAuthSettings {
  /** Lifetime of an access token in seconds (OAUTH_ACCESS_TOKEN_TTL). */
  accessTokenTtlS: number;
  /** Lifetime of a refresh token in seconds; each refresh gives a new one (OAUTH_REFRESH_TOKEN_TTL). */
  refreshTokenTtlS: number;
  /** What one client address may ask of the OAuth and account paths (limits.ts). */
  limits: OAuthLimits;
  /** Who may use the developer console at /developers (DEVELOPER_CONSOLE). */
  developerConsole: DeveloperConsole;
  /** Whether a personal access token may be made without an expiry (PERSONAL_TOKENS_NO_EXPIRY). */
  personalTokensNoExpiry: boolean;
  /** Whether webhook endpoints may be http and at any address (WEBHOOK_ALLOW_PRIVATE), for the console. */
  webhookAllowPrivate: boolean;
}

/** open: every user who can sign in; invite: the users the operator marks developers; off: nobody. */
export type DeveloperConsole = 'open' | 'invite' | 'off';

export const DEVELOPER_CONSOLE_MODES: readonly DeveloperConsole[] = ['open', 'invite', 'off'];

export interface OAuthLimits {
  /** Requests to /oauth/ and /account paths per client address in a window (OAUTH_RATE_LIMIT_MAX). */
  max: number;
  /** That window (OAUTH_RATE_LIMIT_WINDOW). */
  windowMs: number;
  /**
   * Steps of flows that may leave a row without a sign-in (authorization requests, device authorizations, codes
   * entered, flows resumed) per client address per hour (OAUTH_FLOWS_PER_ADDRESS).
   */
  flowsPerHour: number;
}

/**
 * A person signing in, allowing an app or entering a device's code makes a few requests a minute and goes
 * through a flow or two an hour, 3 to 6 steps each; a device polling the token endpoint every 5 s makes 12
 * requests a minute. A flood from one address is held to 5 requests a second, and to 100 flow steps an hour,
 * each of which leaves at most one row, for at most an hour (docs/oauth.md#limits).
 */
export const DEFAULT_OAUTH_LIMITS: OAuthLimits = {
  max: 300,
  windowMs: 60_000,
  flowsPerHour: 100,
};

export const DEFAULT_OAUTH_SETTINGS: OAuthSettings = {
  accessTokenTtlS: 3600,
  refreshTokenTtlS: 30 * 86_400,
  limits: DEFAULT_OAUTH_LIMITS,
  // Every user is one the operator made: the console lets them register apps that reach no other user
  // without that user's consent (docs/developer-console.md#who-may-use-it).
  developerConsole: 'open',
  personalTokensNoExpiry: false,
  webhookAllowPrivate: false,
};
