// Process-wide Prometheus counters that any layer may increment; the server's /metrics exports them next to
// its HTTP metrics. They count what happens in this process only: an import run by the CLI is another
// process, which is why /metrics also reports the store's change sequence (it rises with every import).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

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
    help: '1 while requests skip Redis (the shared rate-limit counters and heavy-request leases) after a failure and are counted locally, 0 otherwise.',
    registers: [processRegistry],
  }),
};

/** Heavy requests (plugins/heavy-requests.ts) and the long answers that streams.ts cuts. */
export const heavyMetrics = {
  held: new Gauge({
    name: 'chessport_heavy_requests_in_flight',
    help: 'Heavy requests (PGN exports, ...) this instance is running, by kind.',
    labelNames: ['kind'] as const,
    registers: [processRegistry],
  }),
  refused: new Counter({
    name: 'chessport_heavy_requests_refused_total',
    help: 'Heavy requests refused, by kind and limit: client (429, per app and user), instance (503, this instance is full) or pressure (503, load shedding).',
    labelNames: ['kind', 'limit'] as const,
    registers: [processRegistry],
  }),
  leaseErrors: new Counter({
    name: 'chessport_heavy_lease_store_errors_total',
    help: 'Shared (Redis) heavy-request lease failures; the slot was held in this process instead.',
    registers: [processRegistry],
  }),
  cut: new Counter({
    name: 'chessport_streams_cut_total',
    help: 'Long answers cut off before their end, by reason (token_revoked, token_expired, too_long, too_slow).',
    labelNames: ['reason'] as const,
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

/** For the webhook delivery worker (docs/webhooks.md#metrics), which runs in the server. */
export const webhookMetrics = {
  attempts: new Counter({
    name: 'chessport_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this instance, by outcome (delivered, http_error, timeout, network_error, address_refused).',
    labelNames: ['outcome'] as const,
    registers: [processRegistry],
  }),
  deliveries: new Counter({
    name: 'chessport_webhook_deliveries_total',
    help: 'Webhook deliveries this instance finished, by outcome (delivered; failed: retries exhausted or 410 Gone; dropped: the app may no longer hear of the user).',
    labelNames: ['outcome'] as const,
    registers: [processRegistry],
  }),
  lag: new Histogram({
    name: 'chessport_webhook_delivery_lag_seconds',
    help: 'From the latest change a delivery carries to its 2xx answer.',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
    registers: [processRegistry],
  }),
  queue: new Gauge({
    name: 'chessport_webhook_queue_depth',
    help: 'Store-wide: signals in the outbox not yet fanned out (queue="outbox"), and deliveries pending (queue="deliveries"), retrying ones and those of disabled endpoints included.',
    labelNames: ['queue'] as const,
    registers: [processRegistry],
  }),
  oldest: new Gauge({
    name: 'chessport_webhook_oldest_pending_seconds',
    help: 'Store-wide: the age of the oldest outbox signal (queue="outbox") and of the oldest pending delivery (queue="deliveries"); 0 when there is none.',
    labelNames: ['queue'] as const,
    registers: [processRegistry],
  }),
};
