// Probes for orchestrators, outside /api/v1 and without auth: /healthz says the process answers, /readyz
// that the store answers too (a locked or unreachable store makes the instance not ready: 503).
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/errors.ts';
import type { OutageLog } from '../../platform/outage-log.ts';
import type { Store } from '../../store/index.ts';

/** A failed /readyz counts in the store's outage like a failed request, and a passed one ends it. */
export function healthRoutes(app: FastifyInstance, store: Store, storeOutage: OutageLog): void {
  const noStore = { 'cache-control': 'no-store' };
  app.register(async (probes) => {
    probes.get('/healthz', async (_request, reply) => reply.headers(noStore).send({ status: 'ok' }));
    probes.get('/readyz', async (request, reply) => {
      reply.headers(noStore);
      try {
        await store.ping();
        // ping's `select 1` reads no table; this reads a row, so a store locked by another process shows.
        await store.feed.lastSeq();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const code = (error as { code?: unknown }).code;
        storeOutage.failed({ reason, code, probe: '/readyz' }, request.log);
        throw new ApiError('unavailable', 'The store is not reachable.', { 'retry-after': '1' });
      }
      storeOutage.succeeded();
      return { status: 'ready' };
    });
  });
}
