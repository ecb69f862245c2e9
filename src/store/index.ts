export { DEFAULT_DATABASE_URL, DEFAULT_POOL_MAX, isPostgresUrl, openStore } from './connect.ts';
export { hashToken, MAX_GAMES_LIMIT, Store, StoreError } from './store.ts';
export type * from './types.ts';
