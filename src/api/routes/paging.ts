// Offset paging shared by the game lists: one extra row tells whether a next page exists.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page } from '../../store/index.ts';
import { pageLinks } from '../params.ts';

export async function sendPage<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  fetch: (page: Page) => Promise<T[]>,
): Promise<{ data: T[] }> {
  const { limit, offset } = request.query as { limit: number; offset: number };
  const rows = await fetch({ limit: limit + 1, offset });
  const hasMore = rows.length > limit;
  const link = pageLinks(request, limit, offset, hasMore);
  if (link) reply.header('link', link);
  return { data: hasMore ? rows.slice(0, limit) : rows };
}
