// Bearer token authentication and scope checks (spec "Authentication", RFC 6750, docs/design.md 17 and 23).
// A 401's challenge names the protected-resource metadata (RFC 9728 section 5.1), where a client finds the
// authorization server that issues tokens (docs/oauth.md).
import type { FastifyRequest } from 'fastify';
import type { Scope } from '../domain/scopes.ts';
import { ApiError } from '../platform/http/errors.ts';
import { hashToken, type Store, type TokenInfo } from '../store/index.ts';

export const REALM = 'chessport';

// RFC 6750 b64token; anything else cannot be one of our tokens.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
// The scheme name alone, whatever follows: "Bearer" with a malformed token is still a (bad) bearer token.
const BEARER_SCHEME = /^Bearer(?:\s|$)/i;

function challenge(
  code: 'invalid_request' | 'invalid_token' | 'insufficient_scope',
  description: string,
  extra: { scope?: Scope; resourceMetadata?: string } = {},
): string {
  const parts = [`realm="${REALM}"`, `error="${code}"`, `error_description="${description}"`];
  if (extra.scope) parts.push(`scope="${extra.scope}"`);
  if (extra.resourceMetadata) parts.push(`resource_metadata="${extra.resourceMetadata}"`);
  return `Bearer ${parts.join(', ')}`;
}

function invalidToken(description: string, resourceMetadata: string | undefined): ApiError {
  return new ApiError('invalid_token', description, {
    'www-authenticate': challenge('invalid_token', description, { resourceMetadata }),
  });
}

/** Why a token that authenticated a request no longer holds. */
export type TokenLapse = 'token_revoked' | 'token_expired';

/**
 * The 401 of a token that was revoked (or never existed) or has expired; it names `resourceMetadata`, the URL
 * of the protected-resource metadata, when there is one.
 */
export function lapsedToken(lapse: TokenLapse, resourceMetadata?: string): ApiError {
  return invalidToken(
    lapse === 'token_expired'
      ? 'The access token has expired.'
      : 'The access token is invalid or has been revoked.',
    resourceMetadata,
  );
}

/**
 * Resolves the request's token or throws the 400 or 401 that RFC 6750 prescribes; a 401 names
 * `resourceMetadata`, the URL of the protected-resource metadata, when there is one.
 */
export async function authenticate(
  store: Store,
  request: FastifyRequest,
  resourceMetadata?: string,
  now = Date.now(),
): Promise<TokenInfo> {
  // RFC 6750 3.1: a request that carries its token more than once is invalid_request, whichever would be
  // valid. request.headers keeps only the first Authorization line; headersDistinct has every one.
  if ((request.raw.headersDistinct.authorization?.length ?? 0) > 1) {
    const description = 'The request carries more than one Authorization header.';
    throw new ApiError('invalid_request', description, {
      'www-authenticate': challenge('invalid_request', description),
    });
  }
  const header = request.headers.authorization;
  // No bearer credentials at all (no header, an empty one, or another scheme such as Basic): a bare
  // challenge without an error attribute, which RFC 6750 section 3 asks for "if the request lacks any
  // authentication information (e.g., the client ... attempted using an unsupported authentication scheme)".
  if (header === undefined || !BEARER_SCHEME.test(header)) {
    const metadata = resourceMetadata ? `, resource_metadata="${resourceMetadata}"` : '';
    throw new ApiError('invalid_token', 'The request carries no Bearer access token.', {
      'www-authenticate': `Bearer realm="${REALM}"${metadata}`,
    });
  }
  const match = BEARER.exec(header);
  const token = match?.[1];
  if (!token || token.length > 512) throw invalidToken('The Bearer token is malformed.', resourceMetadata);
  const info = await store.tokens.findByHash(hashToken(token));
  if (!info || info.revokedAt !== null) throw lapsedToken('token_revoked', resourceMetadata);
  if (info.expiresAt !== null && info.expiresAt <= now) throw lapsedToken('token_expired', resourceMetadata);
  return info;
}

export function requireScope(token: TokenInfo, scope: Scope): void {
  if (token.scopes.includes(scope)) return;
  const description = `The access token lacks the ${scope} scope.`;
  throw new ApiError('insufficient_scope', description, {
    'www-authenticate': challenge('insufficient_scope', description, { scope }),
  });
}

/**
 * Whether the request's token still holds, for an answer that outlives the moment it was authenticated (a long
 * export): its expiry by the clock, then its revocation by the same one-row lookup as every request's.
 */
export async function tokenLapse(
  store: Store,
  request: FastifyRequest,
  token: TokenInfo,
  now = Date.now(),
): Promise<TokenLapse | undefined> {
  if (token.expiresAt !== null && token.expiresAt <= now) return 'token_expired';
  const value = BEARER.exec(request.headers.authorization ?? '')?.[1];
  const info = value === undefined ? undefined : await store.tokens.findByHash(hashToken(value));
  if (!info || info.id !== token.id || info.revokedAt !== null) return 'token_revoked';
  if (info.expiresAt !== null && info.expiresAt <= now) return 'token_expired';
  return undefined;
}
