// Webhook deliveries (docs/webhooks.md), `store.webhooks.deliveries`: what the delivery worker leases,
// attempts and records, and what the operator lists and retries. Every instance may run the worker on one
// store: a lease (leased_until) lets one instance at a time attempt a delivery, and a killed instance's lease
// runs out so that another sends it again (at least once).
import { sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { StoreError } from './errors.ts';
import type { DB } from './schema.ts';
import type {
  ClaimedDelivery,
  CoalescingRule,
  WebhookDelivery,
  WebhookDeliveryState,
  WebhookEventType,
  WebhookQueue,
} from './types.ts';
import { insertPending } from './webhook-outbox.ts';

function stateOf(row: { status: string; attempts: number; last_error: string | null }): WebhookDeliveryState {
  // An attempt counts from its lease: one under way with no failure recorded before it is still pending.
  if (row.status === 'pending')
    return Number(row.attempts) > 0 && row.last_error !== null ? 'retrying' : 'pending';
  return row.status as WebhookDeliveryState;
}

const numberOrNull = (value: number | null) => (value === null ? null : Number(value));

function deliveryQuery(db: Executor) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('apps as a', 'a.id', 'e.app_id')
    .innerJoin('users as u', 'u.id', 'd.user_id')
    .selectAll('d')
    .select(['a.name as app_name', 'u.login']);
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof deliveryQuery>['executeTakeFirstOrThrow']>>;

function toDelivery(row: DeliveryRow): WebhookDelivery {
  const state = stateOf(row);
  return {
    id: row.id,
    messageId: row.message_id,
    endpointId: row.endpoint_id,
    appName: row.app_name,
    userId: row.user_id,
    userLogin: row.login,
    eventType: row.event_type as WebhookEventType,
    state,
    changes: Number(row.changes),
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
    lastChangeAt: Number(row.last_change_at),
    dueAt: row.status === 'pending' ? Number(row.due_at) : null,
    lastAttemptAt: numberOrNull(row.last_attempt_at),
    lastStatus: numberOrNull(row.last_status),
    lastError: row.last_error,
    lastLatencyMs: numberOrNull(row.last_latency_ms),
    finishedAt: numberOrNull(row.finished_at),
  };
}

export class WebhookDeliveries {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /**
   * Leases up to `limit` due deliveries of enabled endpoints until now + leaseMs, oldest due first, counting
   * the attempt. On PostgreSQL rows that another instance is leasing are skipped (FOR UPDATE SKIP LOCKED).
   */
  async claim(options: { limit: number; now: number; leaseMs: number }): Promise<ClaimedDelivery[]> {
    const { limit, now, leaseMs } = options;
    const lease = now + leaseMs;
    const lock = this.ctx.adapter.skipLocked('d');
    const due = sql`d.status = 'pending' and d.due_at <= ${now} and (d.leased_until is null or d.leased_until <= ${now})
      and e.disabled_at is null`;
    // Looked at first without the write lock, which on SQLite every process's writers share.
    const { rows: any } = await sql`
      select 1 from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where ${due} limit 1`.execute(
      this.ctx.db,
    );
    if (any.length === 0) return [];
    const { rows } = await sql<{
      id: string;
      message_id: string;
      endpoint_id: string;
      user_id: string;
      event_type: string;
      version: number;
      changes: number;
      last_change_at: number;
      attempts: number;
    }>`
      update webhook_deliveries set leased_until = ${lease}, attempts = attempts + 1
      where id in (
        select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where ${due}
        order by d.due_at limit ${limit} ${lock})
      returning id, message_id, endpoint_id, user_id, event_type, version, changes, last_change_at, attempts`.execute(
      this.ctx.db,
    );
    return rows.map((row) => ({
      id: row.id,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      userId: row.user_id,
      eventType: row.event_type as WebhookEventType,
      version: Number(row.version),
      changes: Number(row.changes),
      lastChangeAt: Number(row.last_change_at),
      attempt: Number(row.attempts),
      lease,
    }));
  }

  /**
   * Records an attempt that the endpoint answered 2xx: the delivery is done, and the endpoint, when it was
   * failing, no longer is. Changes that joined it during the attempt were not in it: they become a delivery
   * of their own, due when the rule says. Nothing happens to a delivery whose lease is no longer this
   * attempt's.
   */
  async recordDelivered(
    claimed: ClaimedDelivery,
    outcome: {
      status: number;
      now: number;
      rule: CoalescingRule;
      endpointFailing: boolean;
      latencyMs?: number;
    },
  ): Promise<void> {
    const { status, now, rule } = outcome;
    const delivered = {
      last_latency_ms: outcome.latencyMs ?? null,
      status: 'delivered' as const,
      message_id: claimed.messageId,
      changes: claimed.changes,
      last_change_at: claimed.lastChangeAt,
      finished_at: now,
      last_attempt_at: now,
      last_status: status,
      last_error: null,
      leased_until: null,
    };
    const mine = (query: UpdateQueryBuilder<DB, 'webhook_deliveries', 'webhook_deliveries', UpdateResult>) =>
      query
        .where('id', '=', claimed.id)
        .where('leased_until', '=', claimed.lease)
        .where('status', '=', 'pending');
    // The usual case, in one statement: nothing joined the delivery during the attempt.
    const done = await mine(this.ctx.db.updateTable('webhook_deliveries').set(delivered))
      .where('version', '=', claimed.version)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) {
      await this.ctx.transaction(async (trx) => {
        const row = await trx
          .selectFrom('webhook_deliveries')
          .select(['changes', 'last_change_at', 'spacing_ms'])
          .where('id', '=', claimed.id)
          .where('leased_until', '=', claimed.lease)
          .where('status', '=', 'pending')
          .$call((query) => this.ctx.adapter.lockRows(query))
          .executeTakeFirst();
        if (!row) return;
        await mine(trx.updateTable('webhook_deliveries').set(delivered)).execute();
        const previous = { sentAt: now, spacingMs: Number(row.spacing_ms), changes: claimed.changes };
        const { dueAt, spacingMs } = rule(previous, now);
        await insertPending(trx, {
          endpointId: claimed.endpointId,
          userId: claimed.userId,
          changes: Math.max(1, Number(row.changes) - claimed.changes),
          at: Number(row.last_change_at),
          dueAt,
          spacingMs,
          now,
        });
      });
    }
    if (outcome.endpointFailing) {
      await this.ctx.db
        .updateTable('webhook_endpoints')
        .set({ failing_since: null })
        .where('id', '=', claimed.endpointId)
        .execute();
    }
  }

  /**
   * Records a failed attempt: the delivery is due again at `retryAt`, or with none failed for good. The
   * endpoint is failing since its first failure after its last success: returns that time (undefined when the
   * lease is no longer this attempt's, or the endpoint is gone).
   */
  async recordFailure(
    claimed: ClaimedDelivery,
    outcome: {
      status: number | null;
      error: string;
      now: number;
      retryAt: number | null;
      latencyMs?: number;
    },
  ): Promise<{ failingSince: number } | undefined> {
    const { status, error, now, retryAt } = outcome;
    return this.ctx.transaction(async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          leased_until: null,
          last_attempt_at: now,
          last_status: status,
          last_error: error,
          last_latency_ms: outcome.latencyMs ?? null,
          ...(retryAt === null ? { status: 'failed', finished_at: now } : { due_at: retryAt }),
        })
        .where('id', '=', claimed.id)
        .where('leased_until', '=', claimed.lease)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return undefined;
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: now })
        .where('id', '=', claimed.endpointId)
        .where('failing_since', 'is', null)
        .execute();
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select('failing_since')
        .where('id', '=', claimed.endpointId)
        .executeTakeFirst();
      return endpoint?.failing_since == null ? undefined : { failingSince: Number(endpoint.failing_since) };
    });
  }

  /** Ends a delivery unsent: its app may no longer hear of its user. */
  async recordDropped(claimed: ClaimedDelivery, now: number): Promise<void> {
    await this.ctx.db
      .updateTable('webhook_deliveries')
      .set({ status: 'dropped', finished_at: now, leased_until: null, attempts: claimed.attempt - 1 })
      .where('id', '=', claimed.id)
      .where('leased_until', '=', claimed.lease)
      .execute();
  }

  /** Gives an attempt back untried (the instance is stopping): due again at once, the attempt not counted. */
  async release(claimed: ClaimedDelivery): Promise<void> {
    await this.ctx.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ leased_until: null, attempts: eb('attempts', '-', 1) }))
      .where('id', '=', claimed.id)
      .where('leased_until', '=', claimed.lease)
      .execute();
  }

  /**
   * The latest deliveries, newest first: of one endpoint or of all, and with `failed` only those whose last
   * attempt failed (retrying, or given up).
   */
  async list(options: { endpointId?: string; failed?: boolean; limit: number }): Promise<WebhookDelivery[]> {
    let query = deliveryQuery(this.ctx.db);
    if (options.endpointId !== undefined) query = query.where('d.endpoint_id', '=', options.endpointId);
    if (options.failed) {
      query = query.where((eb) =>
        eb.or([
          eb('d.status', '=', 'failed'),
          // Retrying: an attempt failed. Not one whose first attempt is under way (attempts counts it from
          // its lease, but no error is recorded yet): that has not failed.
          eb.and([
            eb('d.status', '=', 'pending'),
            eb('d.attempts', '>', 0),
            eb('d.last_error', 'is not', null),
          ]),
        ]),
      );
    }
    const rows = await query
      .orderBy('d.created_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(options.limit)
      .execute();
    return rows.map(toDelivery);
  }

  async find(id: string, db: Executor = this.ctx.db): Promise<WebhookDelivery | undefined> {
    const row = await deliveryQuery(db).where('d.id', '=', id).executeTakeFirst();
    return row && toDelivery(row);
  }

  /**
   * Sends a delivery again at once: a pending one is due now; a finished one is pending again, under the same
   * message id, its retries counted afresh (the console's Redeliver). Refused while its endpoint is disabled,
   * and for a finished `changes.available` one while another of its endpoint and user is pending (that one
   * carries the signal).
   */
  async retry(id: string, now = Date.now()): Promise<WebhookDelivery | undefined> {
    return this.ctx.transaction(async (trx) => {
      const found = await this.find(id, trx);
      if (!found) return undefined;
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select('disabled_at')
        .where('id', '=', found.endpointId)
        .executeTakeFirstOrThrow();
      if (endpoint.disabled_at !== null) {
        throw new StoreError(
          `the endpoint ${found.endpointId} of delivery ${id} is disabled: enable it first (chessport webhooks enable ${found.endpointId})`,
        );
      }
      if (found.state === 'pending' || found.state === 'retrying') {
        await trx.updateTable('webhook_deliveries').set({ due_at: now }).where('id', '=', id).execute();
      } else if (found.eventType === 'changes.available') {
        const pending = await trx
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('endpoint_id', '=', found.endpointId)
          .where('user_id', '=', found.userId)
          .where('status', '=', 'pending')
          .where('event_type', '=', 'changes.available')
          .executeTakeFirst();
        if (pending) {
          throw new StoreError(
            `delivery ${pending.id} to the same endpoint for the same user is pending, and carries this signal too: retry that one`,
          );
        }
      }
      if (found.state !== 'pending' && found.state !== 'retrying') {
        await trx
          .updateTable('webhook_deliveries')
          .set({ status: 'pending', due_at: now, attempts: 0, finished_at: null, leased_until: null })
          .where('id', '=', id)
          .execute();
      }
      return this.find(id, trx);
    });
  }

  /** The outbox's signals and the pending deliveries: how many, and since when the oldest waits. */
  async queue(): Promise<WebhookQueue> {
    const { db } = this.ctx;
    const signals = await db
      .selectFrom('webhook_signals')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('first_at').as('oldest')])
      .executeTakeFirstOrThrow();
    const pending = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return {
      signals: Number(signals.n),
      oldestSignalAt: signals.oldest === null ? null : Number(signals.oldest),
      pending: Number(pending.n),
      oldestPendingAt: pending.oldest === null ? null : Number(pending.oldest),
    };
  }

  /** Removes finished deliveries created before `before`; returns how many. */
  async prune(before: number): Promise<number> {
    const result = await this.ctx.db
      .deleteFrom('webhook_deliveries')
      .where('status', '<>', 'pending')
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
