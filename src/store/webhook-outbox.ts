// The webhook outbox (docs/webhooks.md), `store.webhooks.outbox`. Every write transaction that changes a
// user's games upserts the user's one row in `webhook_signals` before it commits (webhook-signals.ts). The
// delivery worker fans the signals out: for each endpoint of an app that may hear of the user it joins the
// pending delivery of that endpoint and user, or makes one, due when the coalescing rule says.
import { sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import type { Hearing } from './hearing.ts';
import type { CoalescingRule, PreviousDelivery } from './types.ts';
import { prefixedId, subscribedTo } from './webhook-endpoints.ts';

export class WebhookOutbox {
  private readonly ctx: StoreContext;
  private readonly hearing: Hearing;

  constructor(ctx: StoreContext, hearing: Hearing) {
    this.ctx = ctx;
    this.hearing = hearing;
  }

  /**
   * Fans out up to `limit` signals, oldest first, in one write transaction, and removes them: returns how
   * many. On PostgreSQL a signal that another instance is fanning out, or that a writer is upserting, is
   * skipped (FOR UPDATE SKIP LOCKED): the next round takes it. A delivery finished more than `lookbackMs` ago
   * is no longer the previous one the rule is given (it can no longer delay the next).
   */
  async fanOut(options: {
    limit: number;
    now: number;
    rule: CoalescingRule;
    lookbackMs: number;
  }): Promise<number> {
    const { limit, now, rule } = options;
    const { db, adapter } = this.ctx;
    // Looked at first without the write lock, which on SQLite every process's writers share.
    if (!(await db.selectFrom('webhook_signals').select('user_id').limit(1).executeTakeFirst())) return 0;
    return this.ctx.transaction(async (trx) => {
      const { rows } = await sql<{ user_id: string; changes: number; last_at: number }>`
        select user_id, changes, last_at from webhook_signals order by first_at limit ${limit} ${adapter.skipLocked()}`.execute(
        trx,
      );
      if (rows.length === 0) return 0;
      const userIds = rows.map((row) => row.user_id);
      const hearing = await this.hearing.apps(userIds, now, trx);
      const appIds = [...new Set(hearing.map((pair) => pair.appId))];
      const endpoints =
        appIds.length === 0
          ? []
          : await trx
              .selectFrom('webhook_endpoints')
              .select(['id', 'app_id'])
              .where('app_id', 'in', appIds)
              .where('disabled_at', 'is', null)
              .where(subscribedTo('changes.available'))
              .orderBy('id')
              .execute();
      const targets = rows.flatMap((row) => {
        const apps = new Set(hearing.filter((pair) => pair.userId === row.user_id).map((pair) => pair.appId));
        const signal = { changes: Number(row.changes), at: Number(row.last_at) };
        return endpoints
          .filter((endpoint) => apps.has(endpoint.app_id))
          .map((endpoint) => ({ endpointId: endpoint.id, userId: row.user_id, signal }));
      });
      if (targets.length > 0) {
        const known = await knownDeliveries(trx, targets, now - options.lookbackMs);
        for (const { endpointId, userId, signal } of targets) {
          const key = `${endpointId} ${userId}`;
          if (known.pending.has(key) && (await join(trx, endpointId, userId, signal))) continue;
          const { dueAt, spacingMs } = rule(known.previous.get(key), now);
          await insertPending(trx, { endpointId, userId, ...signal, dueAt, spacingMs, now });
        }
      }
      await trx.deleteFrom('webhook_signals').where('user_id', 'in', userIds).execute();
      return rows.length;
    });
  }
}

/**
 * For these endpoints and users, in one query: which have a pending `changes.available` delivery, and the
 * latest such delivery of each that is no longer pending, among those created since `since`. (Other events
 * neither take changes nor delay them.)
 */
async function knownDeliveries(
  trx: Executor,
  targets: { endpointId: string; userId: string }[],
  since: number,
): Promise<{ pending: Set<string>; previous: Map<string, PreviousDelivery> }> {
  const rows = await trx
    .selectFrom('webhook_deliveries')
    .select(['endpoint_id', 'user_id', 'status', 'last_attempt_at', 'spacing_ms', 'changes'])
    .where('endpoint_id', 'in', [...new Set(targets.map((t) => t.endpointId))])
    .where('user_id', 'in', [...new Set(targets.map((t) => t.userId))])
    .where('event_type', '=', 'changes.available')
    .where((eb) => eb.or([eb('status', '=', 'pending'), eb('created_at', '>=', since)]))
    .orderBy('created_at')
    .execute();
  const pending = new Set<string>();
  const previous = new Map<string, PreviousDelivery>();
  for (const row of rows) {
    const key = `${row.endpoint_id} ${row.user_id}`;
    if (row.status === 'pending') pending.add(key);
    else {
      previous.set(key, {
        sentAt: row.last_attempt_at === null ? null : Number(row.last_attempt_at),
        spacingMs: Number(row.spacing_ms),
        changes: Number(row.changes),
      });
    }
  }
  return { pending, previous };
}

/**
 * The signal joins the pending delivery of the endpoint and user; false when there is none (it finished
 * meanwhile). A delivery that has been attempted takes a new message id as changes join it: a receiver that
 * took the earlier attempt (its answer lost) may deduplicate by webhook-id.
 */
async function join(
  trx: Executor,
  endpointId: string,
  userId: string,
  signal: { changes: number; at: number },
): Promise<boolean> {
  const joined = await sql`
    update webhook_deliveries
    set changes = changes + ${signal.changes}, version = version + 1, last_change_at = ${signal.at},
        message_id = case when attempts > 0 then ${prefixedId('msg')} else message_id end
    where endpoint_id = ${endpointId} and user_id = ${userId} and status = 'pending'
      and event_type = 'changes.available'`.execute(trx);
  return Number(joined.numAffectedRows ?? 0) > 0;
}

/**
 * Adds a pending `changes.available` delivery; should another have become pending for the endpoint and user meanwhile (an
 * attempt that succeeded while changes joined it adds one), the changes join that one instead.
 */
export async function insertPending(
  trx: Executor,
  input: {
    endpointId: string;
    userId: string;
    changes: number;
    at: number;
    dueAt: number;
    spacingMs: number;
    now: number;
  },
): Promise<void> {
  const id = prefixedId('msg');
  await sql`
    insert into webhook_deliveries (id, message_id, endpoint_id, user_id, event_type, status, changes, version,
      spacing_ms, created_at, last_change_at, due_at, attempts)
    values (${id}, ${id}, ${input.endpointId}, ${input.userId}, 'changes.available', 'pending', ${input.changes}, 0,
      ${input.spacingMs}, ${input.now}, ${input.at}, ${input.dueAt}, 0)
    on conflict (endpoint_id, user_id) where status = 'pending' and event_type = 'changes.available' do update
    set changes = webhook_deliveries.changes + excluded.changes, version = webhook_deliveries.version + 1,
        last_change_at = excluded.last_change_at,
        message_id = case when webhook_deliveries.attempts > 0 then excluded.message_id
                     else webhook_deliveries.message_id end`.execute(trx);
}
