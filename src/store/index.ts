export { ANY_OWNER, type ChangeCallback, ChangeSignals, type SourceEvent } from './change-signals.ts';
export {
  DEFAULT_DATABASE_URL,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_POOL_MAX,
  isPostgresUrl,
  openStore,
} from './connect.ts';
export { MAX_GAMES_LIMIT } from './databases.ts';
export { MigrationFailure, StoreError } from './errors.ts';
export { type StoreFault, storeFault } from './faults.ts';
export type { ExportScope, GameExport } from './game-export.ts';
export type { GameFilter } from './game-filter.ts';
export { newGrantId } from './grants.ts';
export { Store } from './store.ts';
export { hashToken } from './tokens.ts';
export type * from './types.ts';
