// Webhook events besides `changes.available` (docs/webhooks.md#events), `store.webhooks.events`: a `ping`
// that someone asks for one endpoint (the console's Send test event), and a `grant.revoked` for each endpoint
// of the app that subscribes to it, written in the revocation's own transaction (grants.ts) so that it exists
// exactly when the revocation does: the outbox. Each is a delivery of its own, attempted and retried as any
// other, and sent whether or not the app may still hear of the user (it is the news that it may not).
import type { Executor, StoreContext } from './context.ts';
import { StoreError } from './errors.ts';
import type { WebhookDelivery } from './types.ts';
import type { WebhookDeliveries } from './webhook-deliveries.ts';
import { prefixedId, subscribedTo } from './webhook-endpoints.ts';

export class WebhookEvents {
  private readonly ctx: StoreContext;
  private readonly deliveries: WebhookDeliveries;

  constructor(ctx: StoreContext, deliveries: WebhookDeliveries) {
    this.ctx = ctx;
    this.deliveries = deliveries;
  }

  /**
   * Enqueues a signed `ping` for one endpoint, due at once, whatever it subscribes to; its `data.user` is the
   * pairwise id, for the endpoint's app, of `userId` (the user who asks). Returns the delivery, or undefined
   * when there is no such endpoint; refused (StoreError) while the endpoint is disabled.
   */
  async enqueuePing(
    endpointId: string,
    userId: string,
    now = Date.now(),
  ): Promise<WebhookDelivery | undefined> {
    return this.ctx.transaction(async (trx) => {
      const endpoint = await trx
        .selectFrom('webhook_endpoints')
        .select('disabled_at')
        .where('id', '=', endpointId)
        .executeTakeFirst();
      if (!endpoint) return undefined;
      if (endpoint.disabled_at !== null) {
        throw new StoreError(
          `the endpoint ${endpointId} is disabled: enable it first to send it a test event`,
        );
      }
      const id = prefixedId('msg');
      await trx
        .insertInto('webhook_deliveries')
        .values(eventRow({ id, endpointId, userId, type: 'ping', at: now }))
        .execute();
      return this.deliveries.find(id, trx);
    });
  }
}

/**
 * Records a `grant.revoked` of the user's grant to the app for every endpoint of the app that subscribes to it
 * (a disabled one too: it waits, pending, until enabled), on `trx`, the revocation's transaction. Returns how
 * many deliveries it made.
 */
export async function recordGrantRevoked(
  trx: Executor,
  input: { appId: string; userId: string; at: number },
): Promise<number> {
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('app_id', '=', input.appId)
    .where(subscribedTo('grant.revoked'))
    .execute();
  if (endpoints.length === 0) return 0;
  await trx
    .insertInto('webhook_deliveries')
    .values(
      endpoints.map((endpoint) =>
        eventRow({
          id: prefixedId('msg'),
          endpointId: endpoint.id,
          userId: input.userId,
          type: 'grant.revoked',
          at: input.at,
        }),
      ),
    )
    .execute();
  return endpoints.length;
}

/** A pending delivery of one event, due at once; its `last_change_at` is when the event happened. */
function eventRow(input: {
  id: string;
  endpointId: string;
  userId: string;
  type: 'ping' | 'grant.revoked';
  at: number;
}) {
  return {
    id: input.id,
    message_id: input.id,
    endpoint_id: input.endpointId,
    user_id: input.userId,
    event_type: input.type,
    status: 'pending' as const,
    changes: 0,
    version: 0,
    spacing_ms: 0,
    created_at: input.at,
    last_change_at: input.at,
    due_at: input.at,
    attempts: 0,
    leased_until: null,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    finished_at: null,
    last_latency_ms: null,
  };
}
