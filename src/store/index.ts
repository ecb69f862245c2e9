export {
  DEFAULT_DATABASE_URL,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_POOL_MAX,
  isPostgresUrl,
  MigrationFailure,
  openStore,
} from './connect.ts';
export { type StoreFault, storeFault } from './faults.ts';
export { hashToken, MAX_GAMES_LIMIT, Store, StoreError } from './store.ts';
export type * from './types.ts';
