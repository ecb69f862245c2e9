// The client's requests to the authorization server: its metadata (RFC 8414) and form POSTs to the token
// and device authorization endpoints (RFC 6749 3.2, RFC 8628 3.1). Plain fetch, and no retries: a token
// request uses a refresh token or device code once, and repeating one whose answer was lost would replay it
// (a replayed refresh token revokes the grant).
import { ChessportNetworkError, ChessportOAuthError } from './errors.ts';
import { userAgentHeader } from './transport.ts';

/** How the client reaches the authorization server. */
export interface OAuthHttpOptions {
  /** A replacement for global fetch (a proxy agent, instrumentation, tests). */
  fetch?: typeof fetch | undefined;
  /** The User-Agent of these requests; default `chessport-client/<version>`. */
  userAgent?: string | undefined;
  /** Time to the answer's headers; Infinity: no limit. Default 30000. */
  timeoutMs?: number | undefined;
}

/** Who the app is at the token endpoint: a public client sends its id, a confidential one its secret too. */
export interface OAuthClient {
  /** The client id the server's operator gave the app (`chessport apps add`). */
  clientId: string;
  /** A confidential client's secret (`cps_...`), sent in HTTP Basic (RFC 6749 2.3.1); none for a public one. */
  clientSecret?: string | undefined;
}

/** The authorization server's metadata (RFC 8414), as far as the client uses it. */
export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  device_authorization_endpoint?: string;
  revocation_endpoint?: string;
  authorization_endpoint?: string;
  scopes_supported?: string[];
  grant_types_supported?: string[];
  [field: string]: unknown;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const TIMER_MAX = 2 ** 31 - 1;

/**
 * @internal The issuer identifier of a chessport server from its address, written as the client's baseUrl is: with or
 * without a trailing slash or the /api/v1 prefix.
 */
export function issuerOf(address: string): string {
  const base = address.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  const parsed = parseUrl(base);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
    throw new TypeError('the issuer must be an http: or https: URL, like https://chess.example.org');
  if (parsed.username || parsed.password || /[?#]/.test(parsed.href))
    throw new TypeError('the issuer must not carry a user name, password, query or fragment');
  return parsed.href.replace(/\/+$/, '');
}

/**
 * Reads the authorization server's metadata from `<issuer>/.well-known/oauth-authorization-server` (RFC 8414
 * section 3; an issuer with a path has it after the well-known part). The document must name the issuer it
 * was asked for (section 3.3) and https endpoints when the issuer is https: a ChessportOAuthError
 * `unexpected_response` otherwise, as for an answer that is not the metadata (404 where OAuth is off).
 */
export async function discoverAuthorizationServer(
  issuer: string,
  options: OAuthHttpOptions & { signal?: AbortSignal | undefined } = {},
): Promise<AuthorizationServerMetadata> {
  const id = issuerOf(issuer);
  const { origin, pathname } = new URL(id);
  const url = `${origin}/.well-known/oauth-authorization-server${pathname === '/' ? '' : pathname}`;
  const { status, body } = await request(url, { method: 'GET', headers: {} }, options, options.signal);
  const wrong = (what: string) =>
    new ChessportOAuthError({ status, error: 'unexpected_response', error_description: what, endpoint: url });
  if (status !== 200 || body === undefined)
    throw wrong(
      status === 404
        ? 'no OAuth metadata here: the server does not offer OAuth, or this is not its address'
        : 'not the OAuth metadata',
    );
  const metadata = body as Partial<AuthorizationServerMetadata>;
  if (typeof metadata.issuer !== 'string' || metadata.issuer.replace(/\/+$/, '') !== id)
    throw wrong(`the metadata names the issuer ${JSON.stringify(metadata.issuer)}, not ${id}`);
  for (const name of ['token_endpoint', 'device_authorization_endpoint', 'revocation_endpoint'] as const) {
    const value = metadata[name];
    if (value === undefined && name !== 'token_endpoint') continue;
    if (typeof value !== 'string' || !endpointAllowed(value, id))
      throw wrong(
        `${name} ${JSON.stringify(value)} is not an ${id.startsWith('https:') ? 'https' : 'http(s)'} URL`,
      );
  }
  return metadata as AuthorizationServerMetadata;
}

/** An endpoint's URL, http(s), and https when the issuer is: the tokens never go over plain http unasked. */
function endpointAllowed(value: string, issuer: string): boolean {
  const protocol = parseUrl(value)?.protocol;
  return protocol === 'https:' || (protocol === 'http:' && issuer.startsWith('http:'));
}

/**
 * @internal POSTs `params` as a form to an OAuth endpoint with the client's credentials and returns the
 * answer's JSON object; a refusal (RFC 6749 5.2) is a ChessportOAuthError with its error code, anything that
 * is not OAuth's JSON one with `unexpected_response`, no answer a ChessportNetworkError.
 */
export async function postForm(
  endpoint: string,
  params: Record<string, string>,
  client: OAuthClient,
  options: OAuthHttpOptions,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const form = new URLSearchParams(params);
  if (client.clientSecret !== undefined) {
    // RFC 6749 2.3.1: each part form-encoded, then Basic; the encoded parts are ASCII, as btoa wants.
    const pair = `${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`;
    headers.authorization = `Basic ${btoa(pair)}`;
  } else {
    form.set('client_id', client.clientId);
  }
  const { status, body } = await request(endpoint, { method: 'POST', headers, body: form }, options, signal);
  const error = body?.error;
  if (status === 200 && body !== undefined && error === undefined) return body;
  if (status >= 400 && typeof error === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/.test(error)) {
    const description = body?.error_description;
    throw new ChessportOAuthError({
      status,
      error,
      error_description: typeof description === 'string' ? description : '',
      endpoint,
    });
  }
  throw new ChessportOAuthError({
    status,
    error: 'unexpected_response',
    error_description: `HTTP ${status}: not an OAuth answer`,
    endpoint,
  });
}

/** new URL, or null for what is not one (URL.parse needs Node.js 22). */
function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

const formEncode = (text: string) => new URLSearchParams({ x: text }).toString().slice(2);

/** One request with a timeout on its headers; the status and the body as a JSON object, if it is one. */
async function request(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: URLSearchParams },
  options: OAuthHttpOptions,
  signal: AbortSignal | undefined,
): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeout = new AbortController();
  const timer =
    timeoutMs <= TIMER_MAX
      ? setTimeout(
          () => timeout.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
          timeoutMs,
        )
      : undefined;
  const failed = (error: unknown) => {
    if (signal?.aborted) return signal.reason;
    const cause = timeout.signal.aborted ? timeout.signal.reason : error;
    const timedOut = cause instanceof DOMException && cause.name === 'TimeoutError';
    return new ChessportNetworkError({
      url,
      attempts: 1,
      timedOut,
      truncated: false,
      cause,
      method: init.method,
    });
  };
  let response: Response;
  try {
    response = await doFetch(url, {
      method: init.method,
      headers: {
        ...init.headers,
        accept: 'application/json',
        'user-agent': userAgentHeader(options.userAgent),
      },
      ...(init.body && { body: init.body }),
      // The answer is the endpoint's own: a redirect elsewhere is not followed with a token in the body.
      redirect: 'manual',
      signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
    });
  } catch (error) {
    throw failed(error);
  } finally {
    clearTimeout(timer);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw failed(error);
  }
  let body: unknown;
  try {
    body = /^application\/(?:[\w.+-]+\+)?json\b/i.test(response.headers.get('content-type') ?? '')
      ? JSON.parse(text)
      : undefined;
  } catch {
    body = undefined;
  }
  const object = typeof body === 'object' && body !== null && !Array.isArray(body);
  return { status: response.status, body: object ? (body as Record<string, unknown>) : undefined };
}
