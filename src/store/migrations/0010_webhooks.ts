// 0010: webhooks (docs/webhooks.md). The operator's endpoints per app with their signing secrets; the outbox
// of signals, one row per user whose games changed since the delivery worker last looked, written in the same
// transaction as the change (StoreContext.write); and the deliveries the worker makes of them, one per
// endpoint and user at a time. It creates only what is not there yet, so that it runs again without harm on a
// store whose records of the migrations were set back to an earlier one (its tables left in place).
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = ({ sqlite: 'integer', postgres: 'bigint' } as const)[dialect];
  await db.schema
    .createTable('webhook_endpoints')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    // `whsec_` and base64: the Standard Webhooks form. Kept as it is, since every delivery is signed with it.
    .addColumn('secret', 'text', (c) => c.notNull())
    // The secret before the latest rotation, which signs beside the new one until previous_secret_until.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('disabled_at', bigint)
    .addColumn('disabled_reason', 'text')
    // The first failed attempt since the endpoint last answered 2xx: an endpoint failing long enough is disabled.
    .addColumn('failing_since', bigint)
    .execute();
  // Which apps may hear of a user is asked of the user's tokens (hearing.ts).
  await db.schema
    .createIndex('tokens_user_app')
    .ifNotExists()
    .on('tokens')
    .columns(['user_id', 'app_id'])
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_app')
    .ifNotExists()
    .on('webhook_endpoints')
    .column('app_id')
    .execute();

  // One row per user with changes not yet fanned out to deliveries: a write transaction upserts its owner's.
  await db.schema
    .createTable('webhook_signals')
    .ifNotExists()
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
    .addColumn('changes', bigint, (c) => c.notNull())
    .addColumn('first_at', bigint, (c) => c.notNull())
    .addColumn('last_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    // The webhook-id of its next attempt: the id itself, or a new one once changes have joined it after an
    // attempt (a receiver that took that attempt and deduplicates by webhook-id must not drop the next).
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) =>
      c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    // pending (attempted or not), delivered, failed (retries exhausted, or 410 Gone), dropped (the app may no
    // longer hear of the user).
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('changes', bigint, (c) => c.notNull())
    // Rises with every change that joins the pending delivery: an attempt that succeeds with a version older
    // than the row's leaves the newer changes to a delivery of their own.
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('spacing_ms', bigint, (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_change_at', bigint, (c) => c.notNull())
    .addColumn('due_at', bigint, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    // Set while an instance sends it: no other takes it until then (a killed instance's lease runs out).
    .addColumn('leased_until', bigint)
    .addColumn('last_attempt_at', bigint)
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('finished_at', bigint)
    .execute();
  // At most one pending delivery per endpoint and user: later changes join it.
  await sql`create unique index if not exists webhook_deliveries_pending on webhook_deliveries (endpoint_id, user_id)
    where status = 'pending'`.execute(db);
  await sql`create index if not exists webhook_deliveries_due on webhook_deliveries (due_at)
    where status = 'pending'`.execute(db);
  await db.schema
    .createIndex('webhook_deliveries_stream')
    .ifNotExists()
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'user_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_created')
    .ifNotExists()
    .on('webhook_deliveries')
    .column('created_at')
    .execute();
}
