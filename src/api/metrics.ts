// Process-wide Prometheus counters that any layer may increment; the server's /metrics exports them next to
// its HTTP metrics. They count what happens in this process only: an import run by the CLI is another
// process, which is why /metrics also reports the store's change sequence (it rises with every import).
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

export const processRegistry = new Registry();

let defaultsCollected = false;
/** Node's own metrics (CPU, memory, event-loop lag, GC), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: processRegistry });
}

/** For the import pipeline: games read, by outcome. */
export const importMetrics = {
  games: new Counter({
    name: 'chessport_import_games_total',
    help: 'Games read by imports in this process, by outcome (imported, duplicate, rejected, over_limit).',
    labelNames: ['outcome'] as const,
    registers: [processRegistry],
  }),
  files: new Counter({
    name: 'chessport_import_files_total',
    help: 'PGN files imported in this process.',
    registers: [processRegistry],
  }),
};

export const feedMetrics = {
  pages: new Counter({
    name: 'chessport_feed_pages_total',
    help: 'Pages of the changes feed served (200 answers of GET /api/v1/changes).',
    registers: [processRegistry],
  }),
  items: new Counter({
    name: 'chessport_feed_items_total',
    help: 'Change items served by the changes feed.',
    registers: [processRegistry],
  }),
  waiting: new Gauge({
    name: 'chessport_feed_waiting',
    help: 'Requests of the changes feed waiting for a change now (wait=).',
    registers: [processRegistry],
  }),
  waits: new Counter({
    name: 'chessport_feed_waits_total',
    help: 'Waits of the changes feed ended, by outcome (change, timeout, shutdown, disconnect, error).',
    labelNames: ['outcome'] as const,
    registers: [processRegistry],
  }),
};

export const rateLimitMetrics = {
  limited: new Counter({
    name: 'chessport_rate_limited_total',
    help: 'Requests answered 429, by policy (app-user or client-address).',
    labelNames: ['policy'] as const,
    registers: [processRegistry],
  }),
  sharedStoreErrors: new Counter({
    name: 'chessport_rate_limit_store_errors_total',
    help: 'Shared (Redis) rate-limit counter failures; the request was counted locally instead.',
    registers: [processRegistry],
  }),
  breakerOpen: new Gauge({
    name: 'chessport_rate_limit_breaker_open',
    help: '1 while requests skip the shared (Redis) rate-limit counters after a failure and are counted locally, 0 otherwise.',
    registers: [processRegistry],
  }),
};

export const requestMetrics = {
  aborted: new Counter({
    name: 'chessport_http_requests_aborted_total',
    help: 'Requests whose connection closed before their answer was all sent (the client left, or shutdown cut it), by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [processRegistry],
  }),
};
