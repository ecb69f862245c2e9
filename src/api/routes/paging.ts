// Offset paging shared by the game lists: one extra row tells whether a next page exists, and the list's
// total (X-Total-Count, Link rel="last") is the count each database keeps (migration 0011), not a count
// of the games; a filtered list's is counted, up to a bound (docs/api.md "Totals"). A page is rendered once
// per version of the owner's games and then served from the page cache (page-cache.ts); a page that starts
// where a rendered one ended seeks to its list position instead of skipping games.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ListedGame, Page } from '../../store/index.ts';
import type { ApiContext } from '../context.ts';
import { type ListTotal, pageLinks, totalHeaders, totalTag } from '../params.ts';
import { bodyTag } from '../plugins/conditional.ts';
import { gameSummaryJson } from '../serialize.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * FILTER_TOTAL_MAX's default: as GitHub's search, which gives at most 1,000 results. A bound of 10,000 (GitLab's
 * for its totals) reads too many rows per page on a large account (docs/performance.md, "Filters").
 */
export const DEFAULT_FILTER_TOTAL_MAX = 1_000;

/**
 * What a page's rows say of the list's length: when the page is its end and holds a game (or is the first
 * page), the offset plus its games; undefined when more games follow or the offset lies past the end.
 */
export function lengthFromPage(offset: number, games: number, hasMore: boolean): number | undefined {
  return hasMore || (games === 0 && offset > 0) ? undefined : offset + games;
}

/**
 * One page of a list of the owner's games, named by `list`: `fetch` reads the rows of a page of it, `total`
 * the list's length, given what the page's rows say of it (lengthFromPage), which a counted total may use.
 */
export async function sendPage(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ApiContext,
  ownerId: string,
  list: string,
  fetch: (page: Page) => Promise<ListedGame[]>,
  total: (fromPage: number | undefined) => Promise<ListTotal>,
): Promise<unknown> {
  const { pages, positions, store } = context;
  const { limit, offset } = request.query as { limit: number; offset: number };
  if (!pages.enabled) {
    const { games, hasMore } = await readPage(limit, offset, undefined, fetch);
    const count = await total(lengthFromPage(offset, games.length, hasMore));
    const link = pageLinks(request, limit, offset, hasMore, count);
    if (link) reply.header('link', link);
    totalHeaders(reply, count);
    return { data: games.map(gameSummaryJson) };
  }
  // Read before the rows: a page rendered from rows newer than its version can only be served to
  // requests that read that older version before those rows were committed, which is still correct.
  const version = await store.games.version(ownerId);
  const key = `${ownerId} ${request.url}`;
  let page = pages.get(key, version);
  // A kept page's tag is had without reading a game: a 304 on it may give its rate-limit count back.
  request.cheapTag = page !== undefined;
  if (!page) {
    const at = (n: number) => `${ownerId} ${list} ${version} ${n}`;
    const { games, hasMore } = await readPage(limit, offset, positions.get(at(offset)), fetch);
    // Read after the version, as the rows are: a total newer than the version is served only with it.
    const count = await total(lengthFromPage(offset, games.length, hasMore));
    const last = games.at(-1);
    if (hasMore && last) positions.set(at(offset + games.length), last.position);
    const link = pageLinks(request, limit, offset, hasMore, count);
    // The route's own serialiser for a 200 JSON answer: the same bytes as an answer rendered uncached.
    const data = games.map(gameSummaryJson);
    const body = Buffer.from(reply.serializeInput({ data }, '200', 'application/json') as string);
    const tag = bodyTag(
      JSON_TYPE,
      '',
      link ?? '',
      'count' in count ? totalTag(String(count.count), '') : totalTag('', String(count.exceeds)),
      body,
    );
    page = { version, body, link, total: count, tag };
    pages.set(key, page);
  }
  if (page.link) reply.header('link', page.link);
  totalHeaders(reply, page.total);
  request.representationTag = page.tag;
  return reply.type(JSON_TYPE).send(page.body);
}

/**
 * A filtered list's length (docs/api.md "Totals"): from the page when it shows the list's end, else counted
 * by `count`, which stops after `upTo + 1` matches; more than FILTER_TOTAL_MAX matches (context.filterTotalMax)
 * is said as exceeding it, on every page alike. A bound of 0 counts every match.
 */
export function boundedTotal(
  context: ApiContext,
  count: (upTo: number | undefined) => Promise<number>,
): (fromPage: number | undefined) => Promise<ListTotal> {
  const max = context.filterTotalMax;
  return async (fromPage) => {
    if (max === 0) return { count: fromPage ?? (await count(undefined)) };
    const counted = fromPage ?? (await count(max));
    return counted > max ? { exceeds: max } : { count: counted };
  };
}

/** The games at `offset`, or right after list position `after` when it is known to be there. */
async function readPage(
  limit: number,
  offset: number,
  after: number | undefined,
  fetch: (page: Page) => Promise<ListedGame[]>,
): Promise<{ games: ListedGame[]; hasMore: boolean }> {
  const rows = await fetch(
    after === undefined ? { limit: limit + 1, offset } : { limit: limit + 1, offset: 0, after },
  );
  const hasMore = rows.length > limit;
  return { games: hasMore ? rows.slice(0, limit) : rows, hasMore };
}
