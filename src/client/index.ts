// chessport/client: the typed HTTP client. Runs on global fetch alone (Node.js, Deno, Bun, browsers).
// The sync engine (src/client/sync) is not exported here, as it needs better-sqlite3.
export { type ChangesQuery, ChessportClient, type ClientOptions, type PageQuery } from './client.ts';
export { ChessportError, ChessportNetworkError } from './errors.ts';
export type { CallOptions, RetryEvent, RetryOptions, RetryPolicy } from './transport.ts';
export type * from './types.ts';
