// Webhook endpoints (docs/webhooks.md), `store.webhooks.endpoints`: an app's receivers, as the operator adds
// them, with the secrets that sign their deliveries. The secret is kept as it is: every delivery is signed
// with it.
import { randomBytes, randomUUID } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import type { WebhookEndpointsTable } from './schema.ts';
import type { SubscribableEvent, WebhookEndpoint, WebhookTarget } from './types.ts';

/** `whsec_` and the base64 of 32 random bytes: the Standard Webhooks form of a signing secret. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** An id with a prefix that says what it names: `ep_` endpoints, `msg_` deliveries and their messages. */
export function prefixedId(prefix: 'ep' | 'msg'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

type EndpointRow = Selectable<WebhookEndpointsTable> & { app_name: string; sector: string };

function endpointQuery(db: Executor) {
  return db
    .selectFrom('webhook_endpoints')
    .innerJoin('apps', 'apps.id', 'webhook_endpoints.app_id')
    .selectAll('webhook_endpoints')
    .select(['apps.name as app_name', 'apps.sector']);
}

const numberOrNull = (value: number | null) => (value === null ? null : Number(value));

/** The `events` column of a subscription: space-separated, null for every event. */
const eventsColumn = (events: readonly SubscribableEvent[] | null | undefined) =>
  events == null ? null : events.join(' ');

/**
 * Whether the endpoint (its `events` column) subscribes to an event type, in SQL: a whole word of the list,
 * or no list.
 */
export function subscribedTo(type: SubscribableEvent) {
  return sql<boolean>`(events is null or ' ' || events || ' ' like ${`% ${type} %`})`;
}

function toEndpoint(row: EndpointRow, now: number): WebhookEndpoint {
  const until = numberOrNull(row.previous_secret_until);
  return {
    id: row.id,
    appId: row.app_id,
    appName: row.app_name,
    appSector: row.sector,
    url: row.url,
    createdAt: Number(row.created_at),
    disabledAt: numberOrNull(row.disabled_at),
    disabledReason: row.disabled_reason,
    failingSince: numberOrNull(row.failing_since),
    previousSecretUntil: row.previous_secret !== null && until !== null && until > now ? until : null,
    events: row.events === null ? null : (row.events.split(' ') as SubscribableEvent[]),
  };
}

export class WebhookEndpoints {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /**
   * Adds an endpoint to an app, subscribed to `events` (every event when none are given); returns it with its
   * signing secret (`whsec_...`), which nothing shows again.
   */
  async add(
    input: { appId: string; url: string; events?: readonly SubscribableEvent[] | null },
    now = Date.now(),
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const id = prefixedId('ep');
    const secret = newWebhookSecret();
    await this.ctx.db
      .insertInto('webhook_endpoints')
      .values({
        id,
        app_id: input.appId,
        url: input.url,
        secret,
        previous_secret: null,
        previous_secret_until: null,
        created_at: now,
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
        events: eventsColumn(input.events),
      })
      .execute();
    return { endpoint: (await this.find(id, now)) as WebhookEndpoint, secret };
  }

  /** Every endpoint (or one app's), oldest first. */
  async list(appId?: string, now = Date.now()): Promise<WebhookEndpoint[]> {
    let query = endpointQuery(this.ctx.db);
    if (appId !== undefined) query = query.where('webhook_endpoints.app_id', '=', appId);
    const rows = await query
      .orderBy('webhook_endpoints.created_at')
      .orderBy('webhook_endpoints.id')
      .execute();
    return rows.map((row) => toEndpoint(row, now));
  }

  async find(id: string, now = Date.now()): Promise<WebhookEndpoint | undefined> {
    const row = await endpointQuery(this.ctx.db).where('webhook_endpoints.id', '=', id).executeTakeFirst();
    return row && toEndpoint(row, now);
  }

  /**
   * The endpoints with the secrets that sign for them now, the newest first: the current one, and the
   * previous one while it may.
   */
  async targets(ids: readonly string[], now = Date.now()): Promise<WebhookTarget[]> {
    if (ids.length === 0) return [];
    const rows = await endpointQuery(this.ctx.db).where('webhook_endpoints.id', 'in', ids).execute();
    return rows.map((row) => {
      const endpoint = toEndpoint(row, now);
      const previous = endpoint.previousSecretUntil === null ? [] : [row.previous_secret as string];
      return { ...endpoint, secrets: [row.secret, ...previous] };
    });
  }

  /**
   * Removes an endpoint with its deliveries (the foreign key cascades). Undefined when there is no such
   * endpoint.
   */
  async remove(id: string): Promise<WebhookEndpoint | undefined> {
    const endpoint = await this.find(id);
    if (!endpoint) return undefined;
    await this.ctx.db.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
    return endpoint;
  }

  /**
   * Gives the endpoint a new secret; the current one signs beside it for `keepMs` more (a secret that was
   * still kept from an earlier rotation stops signing now).
   */
  async rotateSecret(
    id: string,
    keepMs: number,
    now = Date.now(),
  ): Promise<{ endpoint: WebhookEndpoint; secret: string } | undefined> {
    const secret = newWebhookSecret();
    const rotated = await this.ctx.db
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        previous_secret: eb.ref('secret'),
        previous_secret_until: now + keepMs,
        secret,
      }))
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(rotated.numUpdatedRows) === 0) return undefined;
    return { endpoint: (await this.find(id, now)) as WebhookEndpoint, secret };
  }

  /** Subscribes the endpoint to these event types (null: every one). Undefined when there is no such endpoint. */
  async setEvents(
    id: string,
    events: readonly SubscribableEvent[] | null,
  ): Promise<WebhookEndpoint | undefined> {
    const result = await this.ctx.db
      .updateTable('webhook_endpoints')
      .set({ events: eventsColumn(events) })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.find(id);
  }

  /**
   * Disables an endpoint (its deliveries wait, pending, until it is enabled again) with a reason, or (null)
   * enables it (its failures so far are forgotten). Undefined when there is no such endpoint.
   */
  async setDisabled(
    id: string,
    disabled: { at: number; reason: string } | null,
  ): Promise<WebhookEndpoint | undefined> {
    const result = await this.ctx.db
      .updateTable('webhook_endpoints')
      .set(
        disabled
          ? { disabled_at: disabled.at, disabled_reason: disabled.reason }
          : { disabled_at: null, disabled_reason: null, failing_since: null },
      )
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.find(id);
  }
}
