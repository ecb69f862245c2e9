export { DEFAULT_DATABASE_URL, openStore } from './connect.ts';
export { hashToken, Store, StoreError } from './store.ts';
export type * from './types.ts';
