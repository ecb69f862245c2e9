// What every route of the API shares: the store, the server secret, and the state the app builds around
// them (buildApp in app.ts). A module of its own, so that the routes and the route helper depend on it and
// not on the app that registers them.
import type { Store } from '../store/index.ts';
import type { FeedWaits } from './feed-waits.ts';
import type { ListPositions, PageCache } from './page-cache.ts';
import type { RateLimiter } from './plugins/rate-limit.ts';

export interface ApiContext {
  store: Store;
  secret: string;
  limiter: RateLimiter;
  pages: PageCache;
  /** Where game lists continue (page-cache.ts); used with the page cache, which reads the version. */
  positions: ListPositions;
  /** The requests of the changes feed that wait for a change (wait=). */
  waits: FeedWaits;
}
