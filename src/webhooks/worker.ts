// The delivery worker (docs/webhooks.md#delivery-at-least-once), run by `chessport serve`: on a short interval it fans the
// outbox's signals out into deliveries, leases the due ones, attempts them (signed, at most `concurrency` at
// once) and records each outcome. Every instance on one store may run it: the store's leases (FOR UPDATE SKIP
// LOCKED on PostgreSQL, the write lock on SQLite) give each delivery attempt to one of them. It polls, so it
// also delivers what CLI processes wrote; wake() makes it look at once. The events other than changes
// (`ping`, `grant.revoked`: webhook-events.ts in the store) are deliveries written whole, attempted and
// retried the same way.

import { pairwiseId } from '../domain/pairwise.ts';
import { webhookMetrics } from '../platform/metrics.ts';
import {
  type ClaimedDelivery,
  type CoalescingRule,
  type Store,
  storeFault,
  type WebhookTarget,
} from '../store/index.ts';
import { deliveryBody } from './payload.ts';
import { coalescingRule, DEFAULT_COALESCING, retryAt } from './schedule.ts';
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, createSender, type Sender } from './send.ts';
import { signatureHeader } from './signature.ts';

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE: private addresses and http allowed. */
  allowPrivate: boolean;
  /** WEBHOOK_RETRY_SCHEDULE: the wait after each failed attempt; after the last, the delivery fails. */
  retryScheduleMs: number[];
  /** WEBHOOK_DISABLE_AFTER: an endpoint whose attempts all failed for this long is disabled. */
  disableAfterMs: number;
  /** WEBHOOK_POLL_INTERVAL_MS: how often the outbox and the due deliveries are looked at. */
  pollIntervalMs: number;
  /** WEBHOOK_CONCURRENCY: attempts this instance makes at once. */
  concurrency: number;
}

export interface WorkerLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface WorkerOptions {
  store: Store;
  /** The server secret: the deliveries' user ids are the pairwise ids /me gives each app. */
  secret: string;
  settings: WebhookSettings;
  log: WorkerLog;
  userAgent: string;
}

/** How long a lease outlives the attempt's timeout: past it, another instance may send the delivery again. */
const LEASE_MARGIN_MS = 5000;
/** Signals fanned out per transaction; a round fans out one batch, then leases what is due. */
const FAN_OUT_BATCH = 200;
/** How long a freed slot waits for others before a round leases for them. */
const SLOT_WAKE_DELAY_MS = 5;
/** How often the queue gauges are read from the store. */
const GAUGE_INTERVAL_MS = 5000;
/** How long finished deliveries are kept, and how often older ones are removed. */
export const DELIVERY_HISTORY_MS = 30 * 86_400_000;
const PRUNE_INTERVAL_MS = 3_600_000;
/** SQLite: how long a record of an outcome is retried while another process holds the write lock. */
const LOCKED_RETRY_MS = 30_000;

export class DeliveryWorker {
  private readonly store: Store;
  private readonly options: WorkerOptions;
  private readonly sender: Sender;
  private readonly rule: CoalescingRule;
  /** How long ago a delivery may have been made to still delay the next one of its endpoint and user. */
  private readonly lookbackMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A round is to start at the next turn of the event loop (wake()). */
  private roundDue = false;
  private again = false;
  private stopped = true;
  private failingSince: number | undefined;
  private gaugesAt = 0;
  private prunedAt = 0;

  constructor(options: WorkerOptions) {
    this.options = options;
    this.store = options.store;
    this.sender = createSender({ allowPrivate: options.settings.allowPrivate });
    this.rule = coalescingRule(DEFAULT_COALESCING);
    this.lookbackMs = 2 * DEFAULT_COALESCING.maxMs;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks at the outbox and the due deliveries now rather than at the next interval. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.roundDue) return;
    clearTimeout(this.timer);
    this.roundDue = true;
    // The round starts in a task of its own, never inside the code that woke it (a commit's subscribers, an
    // attempt's end): on SQLite its transactions would otherwise interleave with that code's next ones on the
    // same thread, and a write of the server's, waiting synchronously for the lock, would wait for a
    // transaction that cannot go on until the wait ends.
    this.timer = setTimeout(() => this.startRound(), 0);
  }

  private startRound(): void {
    this.roundDue = false;
    if (this.stopped || this.running) return;
    this.running = this.round().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      const wait = this.again ? 0 : this.options.settings.pollIntervalMs;
      this.again = false;
      this.timer = setTimeout(() => this.startRound(), wait);
    });
  }

  /** Stops looking, and waits for the attempts under way (each ends within its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.roundDue = false;
    clearTimeout(this.soon);
    await this.running;
    await Promise.all(this.inFlight);
    this.sender.close();
  }

  private async round(): Promise<void> {
    try {
      await this.fanOut();
      await this.claimAndSend();
      await this.housekeeping();
      if (this.failingSince !== undefined) {
        this.options.log.info(
          { since: new Date(this.failingSince).toISOString() },
          'webhook worker: the store answers again',
        );
        this.failingSince = undefined;
      }
    } catch (error) {
      // A write lock held by another process (SQLite: an import's batch) is waited out by the next round.
      if (storeFault(error) === 'locked') return;
      if (this.failingSince === undefined) {
        this.failingSince = Date.now();
        // Info, not a warning: the server's outage log warns of a failing store (docs/operations.md).
        this.options.log.info({ err: error }, 'webhook worker: the store fails; retrying every interval');
      }
    }
  }

  private async fanOut(): Promise<void> {
    const n = await this.store.webhooks.outbox.fanOut({
      limit: FAN_OUT_BATCH,
      now: Date.now(),
      rule: this.rule,
      lookbackMs: this.lookbackMs,
    });
    // More waiting: the next round at once, after this one's due deliveries have gone out.
    if (n === FAN_OUT_BATCH) this.again = true;
  }

  private async claimAndSend(): Promise<void> {
    const free = this.options.settings.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const claimed = await this.store.webhooks.deliveries.claim({
      limit: free,
      now: Date.now(),
      leaseMs: ATTEMPT_TIMEOUT_MS + LEASE_MARGIN_MS,
    });
    if (claimed.length === 0) return;
    if (claimed.length === free) this.again = true;
    const targets = new Map(
      (await this.store.webhooks.endpoints.targets([...new Set(claimed.map((c) => c.endpointId))])).map(
        (t) => [t.id, t],
      ),
    );
    const changed = claimed.filter((c) => c.eventType === 'changes.available');
    const hearing = new Set(
      (await this.store.webhooks.hearing.apps([...new Set(changed.map((c) => c.userId))])).map(
        (p) => `${p.appId} ${p.userId}`,
      ),
    );
    for (const delivery of claimed) {
      const target = targets.get(delivery.endpointId);
      if (!target) continue; // removed meanwhile, with its deliveries
      // A change goes only to an app that may still hear of the user; a ping or a grant.revoked (the news
      // that it may not) goes whatever.
      const heard =
        delivery.eventType !== 'changes.available' || hearing.has(`${target.appId} ${delivery.userId}`);
      const attempt: Promise<void> = (heard ? this.attempt(delivery, target) : this.drop(delivery))
        .catch((error: unknown) => {
          // Its lease runs out and it is attempted again. A failing store is the outage log's to warn of.
          const log = storeFault(error) ? this.options.log.info : this.options.log.warn;
          log.call(
            this.options.log,
            { err: error, delivery: delivery.id },
            'webhook delivery: recording its outcome failed',
          );
        })
        .finally(() => {
          this.inFlight.delete(attempt);
          this.slotFreed();
        });
      this.inFlight.add(attempt);
    }
  }

  /**
   * A free slot: due deliveries need not wait for the interval. The attempts that end within a few
   * milliseconds of each other share one round, which leases for all their slots at once.
   */
  private slotFreed(): void {
    if (this.stopped || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.wake();
    }, SLOT_WAKE_DELAY_MS);
  }

  private async drop(delivery: ClaimedDelivery): Promise<void> {
    await this.persist(() => this.store.webhooks.deliveries.recordDropped(delivery, Date.now()));
    webhookMetrics.deliveries.inc({ outcome: 'dropped' });
  }

  private async attempt(delivery: ClaimedDelivery, target: WebhookTarget): Promise<void> {
    const body = deliveryBody(
      delivery.eventType,
      pairwiseId(this.options.secret, target.appSector, delivery.userId),
      delivery.lastChangeAt,
    );
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': delivery.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(target.secrets, delivery.messageId, timestamp, body),
      'user-agent': this.options.userAgent,
    };
    const sentAt = performance.now();
    const result = await this.sender.send(target.url, headers, body);
    const latencyMs = Math.round(performance.now() - sentAt);
    webhookMetrics.attempts.inc({ outcome: result.outcome });
    const now = Date.now();
    if (result.outcome === 'delivered') {
      await this.persist(() =>
        this.store.webhooks.deliveries.recordDelivered(delivery, {
          status: result.status ?? 200,
          now,
          rule: this.rule,
          endpointFailing: target.failingSince !== null,
          latencyMs,
        }),
      );
      webhookMetrics.deliveries.inc({ outcome: 'delivered' });
      webhookMetrics.lag.observe(Math.max(0, now - delivery.lastChangeAt) / 1000);
      return;
    }
    await this.failed(delivery, target, result, now, latencyMs);
  }

  private async failed(
    delivery: ClaimedDelivery,
    target: { id: string; url: string; appName: string },
    result: AttemptResult,
    now: number,
    latencyMs: number,
  ): Promise<void> {
    const gone = result.status === 410;
    const next = gone ? null : retryAt(this.options.settings.retryScheduleMs, delivery.attempt, now);
    const failing = await this.persist(() =>
      this.store.webhooks.deliveries.recordFailure(delivery, {
        status: result.status,
        error: result.error,
        now,
        retryAt: next,
        latencyMs,
      }),
    );
    if (next === null) webhookMetrics.deliveries.inc({ outcome: 'failed' });
    const details = { endpoint: target.id, app: target.appName, host: new URL(target.url).host };
    if (gone) {
      await this.disable(target.id, now, 'the endpoint answered 410 Gone');
      this.options.log.warn({ ...details, status: 410 }, 'webhook endpoint disabled: it answered 410 Gone');
    } else if (failing && now - failing.failingSince >= this.options.settings.disableAfterMs) {
      const since = new Date(failing.failingSince).toISOString();
      await this.disable(target.id, now, `every attempt failed since ${since}`);
      this.options.log.warn(
        { ...details, failingSince: since, lastError: result.error },
        'webhook endpoint disabled: every attempt failed for too long',
      );
    }
  }

  private async disable(id: string, at: number, reason: string): Promise<void> {
    await this.persist(() => this.store.webhooks.endpoints.setDisabled(id, { at, reason }));
  }

  /** Keeps the gauges current and old deliveries pruned. */
  private async housekeeping(): Promise<void> {
    const now = Date.now();
    if (now - this.gaugesAt >= GAUGE_INTERVAL_MS) {
      this.gaugesAt = now;
      const queue = await this.store.webhooks.deliveries.queue();
      webhookMetrics.queue.set({ queue: 'outbox' }, queue.signals);
      webhookMetrics.queue.set({ queue: 'deliveries' }, queue.pending);
      const age = (at: number | null) => (at === null ? 0 : Math.max(0, now - at) / 1000);
      webhookMetrics.oldest.set({ queue: 'outbox' }, age(queue.oldestSignalAt));
      webhookMetrics.oldest.set({ queue: 'deliveries' }, age(queue.oldestPendingAt));
    }
    if (now - this.prunedAt >= PRUNE_INTERVAL_MS) {
      this.prunedAt = now;
      await this.store.webhooks.deliveries.prune(now - DELIVERY_HISTORY_MS);
    }
  }

  /**
   * Runs a write, retrying while another process holds the store's write lock (SQLite, where this worker does
   * not wait for it: a wait would stall the server's event loop). Should it never get the lock, the lease
   * runs out and the delivery is attempted again: at least once.
   */
  private async persist<T>(write: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + LOCKED_RETRY_MS;
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (storeFault(error) !== 'locked' || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20));
      }
    }
  }
}
