// Prometheus metrics at /metrics (no auth, like the probes: keep the port off the public internet or
// filter the path at the proxy). Requests and latency by route template and status, plus the process-wide
// counters of src/platform/metrics.ts and the store's change sequence, which every import and change raises.
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics, feedMetrics, processRegistry } from '../../platform/metrics.ts';
import type { Store } from '../../store/index.ts';
import { storeReadMetrics } from './store-read-metrics.ts';

const CHANGES_ROUTE = '/api/v1/changes';
/** How long a scrape waits for the store's change sequence. */
const STORE_WAIT_MS = 1000;

export function metrics(app: FastifyInstance, store: Store): void {
  collectProcessMetrics();
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  type Label = (typeof labelNames)[number];
  const requests = new Counter({
    name: 'chessport_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'chessport_http_request_duration_seconds',
    help: 'Time from request to the last byte of the answer, by method, route template and status.',
    labelNames,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  storeReadMetrics(registry, store);
  new Gauge({
    name: 'chessport_store_change_sequence',
    help: 'Latest value of the store change sequence (rises with every import, update, move and delete).',
    registers: [registry],
    async collect() {
      // A store that does not answer leaves the gauge at its last value (/readyz reports the outage). The
      // wait is short: a query could take up to PG_ANSWER_TIMEOUT (30 s) to fail, past Prometheus's scrape
      // timeout (10 s), and the whole scrape, HTTP and process metrics included, was lost in the outage.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), STORE_WAIT_MS);
      });
      const seq = await Promise.race([store.feed.lastSeq().catch(() => undefined), late]);
      clearTimeout(timer);
      if (seq !== undefined) this.set(seq);
    },
  });

  // One series per method, route template and status, looked up once: prom-client hashes a label set on
  // every inc() and observe(), a cost every request would pay twice.
  const series = new Map<string, { count: Counter.Internal; time: Histogram.Internal<Label> }>();
  app.addHook('onResponse', async (request, reply) => {
    // The route template, never the raw URL: ids in paths would make one series per game.
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let one = series.get(key);
    if (!one) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      one = { count: requests.labels(labels), time: duration.labels(labels) };
      series.set(key, one);
    }
    one.count.inc();
    one.time.observe(reply.elapsedTime / 1000);
  });

  app.addHook('preSerialization', async (request, reply, payload) => {
    if (request.routeOptions.url === CHANGES_ROUTE && reply.statusCode === 200) {
      feedMetrics.pages.inc();
      const items = (payload as { data?: unknown }).data;
      if (Array.isArray(items)) feedMetrics.items.inc(items.length);
    }
    return payload;
  });

  app.register(async (scope) => {
    scope.get('/metrics', async (_request, reply) => {
      const text = (await processRegistry.metrics()) + (await registry.metrics());
      return reply.header('cache-control', 'no-store').type(registry.contentType).send(text);
    });
  });
}
