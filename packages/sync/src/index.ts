// @chessport/sync: the sync engine behind `chessport sync`, a client application of the API. It mirrors a
// user's games into a SQLite file through the changes feed, and builds on @chessport/client (by its package
// name) and better-sqlite3, never on the server's code. The CLI (src/cli/commands/sync.ts) parses the options,
// calls syncMirror and prints what it returns.
export { LOCK_FILE, MIRROR_FILE, PGN_FOLDER, syncMirror } from './engine.ts';
export { SYNC_SCOPES, SyncError, type SyncFailure } from './errors.ts';
export {
  DEFAULT_WAIT_SECONDS,
  type SyncCurrent,
  type SyncOptions,
  type SyncProgress,
  type SyncSummary,
} from './options.ts';
export { TOKENS_FILE } from './saved-sign-in.ts';
export type { LoginOptions, LoginPrompt } from './sign-in.ts';
