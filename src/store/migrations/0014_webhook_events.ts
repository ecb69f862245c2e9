// 0014: webhook events besides `changes.available` (docs/webhooks.md#events). An endpoint subscribes to event
// types (`events`: space-separated, null for every one); a delivery carries one event type, and a `ping` or
// `grant.revoked` delivery is written whole when its event happens (grant.revoked in the revocation's
// transaction: the outbox), so that several of them may be pending for one endpoint and user beside the one
// pending `changes.available` delivery that later changes join. Each attempt's latency is kept for the
// delivery log.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('events', 'text').execute();
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('event_type', 'text', (c) => c.notNull().defaultTo('changes.available'))
    .execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('last_latency_ms', 'integer').execute();
  // At most one pending `changes.available` delivery per endpoint and user (later changes join it); other
  // events are each a delivery of their own.
  await sql`drop index webhook_deliveries_pending`.execute(db);
  await sql`create unique index webhook_deliveries_pending on webhook_deliveries (endpoint_id, user_id)
    where status = 'pending' and event_type = 'changes.available'`.execute(db);
}
