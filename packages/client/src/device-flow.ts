// The device authorization grant (RFC 8628), for command-line tools and devices without a browser: ask for a
// device code, show the user where to enter the user code, and poll the token endpoint until they have
// allowed it (or denied it, or the code expired).
import { ChessportNetworkError, ChessportOAuthError } from './errors.ts';
import {
  discoverAuthorizationServer,
  type OAuthClient,
  type OAuthHttpOptions,
  postForm,
} from './oauth-http.ts';
import { type TokenSet, tokenSet } from './oauth-tokens.ts';
import { sleep } from './transport.ts';

/** startDeviceAuthorization's options: the app's client, what it asks for, and where. */
export interface DeviceAuthorizationOptions extends OAuthClient, OAuthHttpOptions {
  /** The scopes asked for: `'user.read games.read'` or a list. */
  scope: string | readonly string[];
  /** The server's address, whose metadata (RFC 8414) names both endpoints; or give both endpoints. */
  issuer?: string | undefined;
  deviceAuthorizationEndpoint?: string | undefined;
  tokenEndpoint?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** What to poll with. */
export interface DevicePollOptions {
  /** Ends the wait; the call then throws the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Told before each wait: how long, and why (`slow_down`, or a network failure, lengthens the interval). */
  onWait?: ((waitMs: number, reason: 'pending' | 'slow_down' | 'network') => void) | undefined;
}

/** A device authorization under way: show `verificationUri` and `userCode`, then await `tokens()`. */
export interface DeviceAuthorization {
  /** The code the user enters, like `BCDF-GHJK`. */
  userCode: string;
  /** Where the user enters it. */
  verificationUri: string;
  /** The same page with the code filled in (a link or QR code), when the server gives one. */
  verificationUriComplete: string | null;
  /** When the device code expires, in milliseconds since the epoch. */
  expiresAt: number;
  /** The token endpoint, for the OAuthTokens that renews what `tokens()` gives. */
  tokenEndpoint: string;
  /**
   * Polls the token endpoint at the server's interval (5 s unless it says otherwise; 5 s more after each
   * `slow_down`, twice as long after a network failure) until the user has answered. Resolves with the tokens
   * once they allowed it; throws ChessportOAuthError `access_denied` when they denied it, `expired_token` when
   * the code expired first (`invalid_grant` when the server has forgotten the code).
   */
  tokens(options?: DevicePollOptions): Promise<TokenSet>;
}

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 3.2: the interval when the server gives none, and what each slow_down adds. */
const DEFAULT_INTERVAL_S = 5;
const SLOW_DOWN_S = 5;
const MAX_INTERVAL_S = 60;

/** Asks for a device code (RFC 8628 3.1); the user has until `expiresAt` to enter the user code. */
export async function startDeviceAuthorization(
  options: DeviceAuthorizationOptions,
): Promise<DeviceAuthorization> {
  if (typeof options.clientId !== 'string' || options.clientId === '')
    throw new TypeError('a client id is needed');
  const http: OAuthHttpOptions = {
    fetch: options.fetch,
    userAgent: options.userAgent,
    timeoutMs: options.timeoutMs,
  };
  const client: OAuthClient = { clientId: options.clientId, clientSecret: options.clientSecret };
  let { deviceAuthorizationEndpoint: deviceEndpoint, tokenEndpoint } = options;
  if (deviceEndpoint === undefined || tokenEndpoint === undefined) {
    if (options.issuer === undefined)
      throw new TypeError('give the issuer, or the device authorization and token endpoints');
    const metadata = await discoverAuthorizationServer(options.issuer, { ...http, signal: options.signal });
    tokenEndpoint ??= metadata.token_endpoint;
    deviceEndpoint ??= metadata.device_authorization_endpoint;
    if (deviceEndpoint === undefined)
      throw new ChessportOAuthError({
        status: 200,
        error: 'unexpected_response',
        error_description: 'the server offers no device authorization (its metadata names no endpoint)',
        endpoint: options.issuer,
      });
  }
  const scope = typeof options.scope === 'string' ? options.scope : options.scope.join(' ');
  const started = Date.now();
  const answer = await postForm(deviceEndpoint, { scope }, client, http, options.signal);
  const { device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval } =
    answer;
  const wrong = (what: string) =>
    new ChessportOAuthError({
      status: 200,
      error: 'unexpected_response',
      error_description: what,
      endpoint: deviceEndpoint,
    });
  if (typeof device_code !== 'string' || device_code === '') throw wrong('the answer has no device_code');
  if (typeof user_code !== 'string' || user_code === '') throw wrong('the answer has no user_code');
  if (typeof verification_uri !== 'string' || !isWebUrl(verification_uri))
    throw wrong('the answer has no verification_uri');
  if (typeof expires_in !== 'number' || !(expires_in > 0)) throw wrong('the answer has no expires_in');
  const complete =
    typeof verification_uri_complete === 'string' && isWebUrl(verification_uri_complete)
      ? verification_uri_complete
      : null;
  const expiresAt = started + expires_in * 1000;
  const firstInterval =
    typeof interval === 'number' && interval > 0 ? Math.min(interval, MAX_INTERVAL_S) : DEFAULT_INTERVAL_S;
  const endpoint = tokenEndpoint;

  async function tokens(poll: DevicePollOptions = {}): Promise<TokenSet> {
    const { signal } = poll;
    let intervalS = firstInterval;
    let reason: 'pending' | 'slow_down' | 'network' = 'pending';
    for (;;) {
      poll.onWait?.(intervalS * 1000, reason);
      await sleep(intervalS * 1000, signal);
      try {
        const granted = await postForm(
          endpoint,
          { grant_type: DEVICE_GRANT, device_code: device_code as string },
          client,
          http,
          signal,
        );
        return tokenSet(granted, endpoint);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (error instanceof ChessportNetworkError) {
          // RFC 8628 3.5: after a failed connection, poll less often.
          intervalS = Math.min(intervalS * 2, MAX_INTERVAL_S);
          reason = 'network';
        } else if (error instanceof ChessportOAuthError && error.error === 'slow_down') {
          intervalS = Math.min(intervalS + SLOW_DOWN_S, MAX_INTERVAL_S);
          reason = 'slow_down';
        } else if (!(error instanceof ChessportOAuthError && error.error === 'authorization_pending')) {
          throw error;
        } else {
          reason = 'pending';
        }
        // A server still pending after the code's expiry would be polled for ever.
        if (Date.now() > expiresAt)
          throw new ChessportOAuthError({
            status: error instanceof ChessportOAuthError ? error.status : 0,
            error: 'expired_token',
            error_description: 'the device code expired before the user answered',
            endpoint,
          });
      }
    }
  }

  return {
    userCode: user_code,
    verificationUri: verification_uri,
    verificationUriComplete: complete,
    expiresAt,
    tokenEndpoint: endpoint,
    tokens,
  };
}

function isWebUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
