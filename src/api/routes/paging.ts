// Offset paging shared by the game lists: one extra row tells whether a next page exists. A page is
// rendered once per version of the owner's games and then served from the page cache (page-cache.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page } from '../../store/index.ts';
import type { ApiContext } from '../app.ts';
import { pageLinks } from '../params.ts';
import { bodyTag } from '../plugins/conditional.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** One page of the owner's games: `fetch` reads the rows of a page of the list. */
export async function sendPage<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  context: ApiContext,
  ownerId: string,
  fetch: (page: Page) => Promise<T[]>,
): Promise<unknown> {
  const { pages, store } = context;
  if (!pages.enabled) {
    const { data, link } = await readPage(request, fetch);
    if (link) reply.header('link', link);
    return { data };
  }
  // Read before the rows: a page rendered from rows newer than its version can only be served to
  // requests that read that older version before those rows were committed, which is still correct.
  const version = await store.gamesVersion(ownerId);
  const key = `${ownerId} ${request.url}`;
  let page = pages.get(key, version);
  if (!page) {
    const { data, link } = await readPage(request, fetch);
    // The route's own serialiser for a 200 JSON answer: the same bytes as an answer rendered uncached.
    const body = Buffer.from(reply.serializeInput({ data }, '200', 'application/json') as string);
    page = { version, body, link, tag: bodyTag(JSON_TYPE, '', link ?? '', body) };
    pages.set(key, page);
  }
  if (page.link) reply.header('link', page.link);
  request.representationTag = page.tag;
  return reply.type(JSON_TYPE).send(page.body);
}

async function readPage<T>(
  request: FastifyRequest,
  fetch: (page: Page) => Promise<T[]>,
): Promise<{ data: T[]; link: string | undefined }> {
  const { limit, offset } = request.query as { limit: number; offset: number };
  const rows = await fetch({ limit: limit + 1, offset });
  const hasMore = rows.length > limit;
  return {
    data: hasMore ? rows.slice(0, limit) : rows,
    link: pageLinks(request, limit, offset, hasMore),
  };
}
