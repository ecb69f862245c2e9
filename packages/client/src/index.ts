// @chessport/client: the typed HTTP client. Runs on global fetch alone (Node.js, Deno, Bun, browsers), with
// no runtime dependency. The sync engine, which needs better-sqlite3, is not part of it: it lives in the
// chessport project (src/sync) and builds on this.
export {
  type ChangesQuery,
  ChessportClient,
  type ClientOptions,
  type ExpandedChangesQuery,
  type PageQuery,
} from './client.ts';
export { ChessportError, ChessportNetworkError } from './errors.ts';
export type { CallOptions, RetryEvent, RetryOptions, RetryPolicy } from './transport.ts';
export type * from './types.ts';
