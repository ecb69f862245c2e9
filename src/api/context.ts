// What every route of the API shares: the store, the server secret, and the state the app builds around
// them (buildApp in src/server/app.ts). A module of its own, so that the routes and the route helper depend
// on it and not on the app that registers them.

import type { RateLimiter } from '../platform/http/rate-limit.ts';
import type { Store } from '../store/index.ts';
import type { FeedWaits } from './feed-waits.ts';
import type { LongAnswers } from './long-answers.ts';
import type { ListPositions, PageCache } from './page-cache.ts';
import type { HeavyRequests } from './plugins/heavy-requests.ts';

export interface ApiContext {
  store: Store;
  secret: string;
  limiter: RateLimiter;
  /** Slots for heavy requests (plugins/heavy-requests.ts): `await context.heavy.hold(request, reply, kind)`. */
  heavy: HeavyRequests;
  /** Long answers that end with their token and cannot crawl (long-answers.ts). */
  longAnswers: LongAnswers;
  pages: PageCache;
  /** Where game lists continue (page-cache.ts); used with the page cache, which reads the version. */
  positions: ListPositions;
  /** The protected-resource metadata's URL (RFC 9728), named in 401 challenges; undefined without OAuth. */
  resourceMetadataUrl: () => string | undefined;
  /**
   * The most matches a filtered game list counts for its total (FILTER_TOTAL_MAX); above it the list says only
   * that it holds more (routes/paging.ts). 0: every match is counted.
   */
  filterTotalMax: number;
  /** The requests of the changes feed that wait for a change (wait=). */
  waits: FeedWaits;
}
