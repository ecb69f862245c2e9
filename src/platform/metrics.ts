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

/** A metric of a kind (Counter, Gauge) in the process registry, by `labelNames` (none: a single series). */
function registered<M, T extends string = string>(
  Kind: new (config: { name: string; help: string; labelNames: readonly T[]; registers: Registry[] }) => M,
  name: string,
  help: string,
  labelNames: readonly T[] = [],
): M {
  return new Kind({ name, help, labelNames, registers: [processRegistry] });
}

const counter = <T extends string = string>(name: string, help: string, labelNames?: readonly T[]) =>
  registered(Counter<T>, name, help, labelNames);
const gauge = <T extends string = string>(name: string, help: string, labelNames?: readonly T[]) =>
  registered(Gauge<T>, name, help, labelNames);

export const feedMetrics = {
  pages: counter(
    'chessport_feed_pages_total',
    'Pages of the changes feed served (200 answers of GET /api/v1/changes).',
  ),
  items: counter('chessport_feed_items_total', 'Change items served by the changes feed.'),
  waiting: gauge('chessport_feed_waiting', 'Requests of the changes feed waiting for a change now (wait=).'),
  waits: counter(
    'chessport_feed_waits_total',
    'Waits of the changes feed ended, by outcome (change, timeout, shutdown, disconnect, error).',
    ['outcome'],
  ),
};

export const rateLimitMetrics = {
  limited: counter(
    'chessport_rate_limited_total',
    'Requests answered 429, by policy (app-user or client-address).',
    ['policy'],
  ),
  sharedStoreErrors: counter(
    'chessport_rate_limit_store_errors_total',
    'Shared (Redis) rate-limit counter failures; the request was counted locally instead.',
  ),
  breakerOpen: gauge(
    'chessport_rate_limit_breaker_open',
    '1 while requests skip Redis (the shared rate-limit counters and heavy-request leases) after a failure and are counted locally, 0 otherwise.',
  ),
};

/** Heavy requests (src/api/plugins/heavy-requests.ts) and the long answers that long-answers.ts cuts. */
export const heavyMetrics = {
  held: gauge(
    'chessport_heavy_requests_in_flight',
    'Heavy requests (PGN exports, ...) this instance is running, by kind.',
    ['kind'],
  ),
  refused: counter(
    'chessport_heavy_requests_refused_total',
    'Heavy requests refused, by kind and limit: client (429, per app and user), instance (503, this instance is full) or pressure (503, load shedding).',
    ['kind', 'limit'],
  ),
  leaseErrors: counter(
    'chessport_heavy_lease_store_errors_total',
    'Shared (Redis) heavy-request lease failures; the slot was held in this process instead.',
  ),
  overLimit: counter(
    'chessport_heavy_requests_cut_total',
    'Heavy requests cut off because their app and user held more than their limit across instances, once Redis had taken back leases it had lost or not seen (a restart, a failover, an outage): the newest beyond the limit, by kind.',
    ['kind'],
  ),
  cut: counter(
    'chessport_streams_cut_total',
    'Long answers cut off before their end, by reason (token_revoked, token_expired, too_long, too_slow).',
    ['reason'],
  ),
};

export const requestMetrics = {
  aborted: counter(
    'chessport_http_requests_aborted_total',
    'Requests whose connection closed before their answer was all sent (the client left, or shutdown cut it), by method, route template and status.',
    ['method', 'route', 'status'],
  ),
};

/** For the webhook delivery worker (docs/webhooks.md#metrics), which runs in the server. */
export const webhookMetrics = {
  attempts: counter(
    'chessport_webhook_attempts_total',
    'Webhook delivery attempts made by this instance, by outcome (delivered, http_error, timeout, network_error, address_refused).',
    ['outcome'],
  ),
  deliveries: counter(
    'chessport_webhook_deliveries_total',
    'Webhook deliveries this instance finished, by outcome (delivered; failed: retries exhausted or 410 Gone; dropped: the app may no longer hear of the user).',
    ['outcome'],
  ),
  lag: new Histogram({
    name: 'chessport_webhook_delivery_lag_seconds',
    help: 'From the latest change a delivery carries to its 2xx answer.',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
    registers: [processRegistry],
  }),
  queue: gauge(
    'chessport_webhook_queue_depth',
    'Store-wide: signals in the outbox not yet fanned out (queue="outbox"), and deliveries pending (queue="deliveries"), retrying ones and those of disabled endpoints included.',
    ['queue'],
  ),
  oldest: gauge(
    'chessport_webhook_oldest_pending_seconds',
    'Store-wide: the age of the oldest outbox signal (queue="outbox") and of the oldest pending delivery (queue="deliveries"); 0 when there is none.',
    ['queue'],
  ),
};
