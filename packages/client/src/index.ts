// @chessport/client: the typed HTTP client. Runs on global fetch alone (Node.js, Deno, Bun, browsers), with
// no runtime dependency. The sync engine, which needs better-sqlite3, is not part of it: it lives in the
// chessport project (packages/sync, @chessport/sync) and builds on this.
export {
  type ChangesQuery,
  ChessportClient,
  type ClientOptions,
  type ExpandedChangesQuery,
  type ExportQuery,
  type GameExport,
  type GameFilters,
  type GameQuery,
  type PageQuery,
} from './client.ts';
export {
  type DeviceAuthorization,
  type DeviceAuthorizationOptions,
  type DevicePollOptions,
  startDeviceAuthorization,
} from './device-flow.ts';
export { ChessportError, ChessportNetworkError, ChessportOAuthError } from './errors.ts';
export {
  type AuthorizationServerMetadata,
  discoverAuthorizationServer,
  type OAuthClient,
  type OAuthHttpOptions,
} from './oauth-http.ts';
export { OAuthTokens, type OAuthTokensOptions, type TokenSet } from './oauth-tokens.ts';
export type { TokenSource } from './token-source.ts';
export type { CallOptions, RetryEvent, RetryOptions, RetryPolicy } from './transport.ts';
export type * from './types.ts';
