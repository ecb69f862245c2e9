// What the webhooks keep (docs/webhooks.md), as `store.webhooks`: endpoints and their secrets
// (webhook-endpoints.ts), the outbox's fan-out into deliveries (webhook-outbox.ts; the signals themselves
// are written by Store.write), deliveries with their leases and outcomes (webhook-deliveries.ts), and which
// apps may hear of a user (hearing.ts).
import type { StoreContext } from './context.ts';
import { appsHearing } from './hearing.ts';
import type {
  ClaimedDelivery,
  CoalescingRule,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookQueue,
  WebhookTarget,
} from './types.ts';
import {
  claimDeliveries,
  findDelivery,
  listDeliveries,
  pruneDeliveries,
  recordDelivered,
  recordDropped,
  recordFailure,
  releaseDelivery,
  retryDelivery,
  webhookQueue,
} from './webhook-deliveries.ts';
import {
  addWebhookEndpoint,
  findWebhookEndpoint,
  listWebhookEndpoints,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  setWebhookEndpointDisabled,
  webhookTargets,
} from './webhook-endpoints.ts';
import { fanOutSignals } from './webhook-outbox.ts';

export class WebhookStore {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /** The apps that may hear of each of these users now (hearing.ts), as (user, app) pairs. */
  async appsHearing(
    userIds: readonly string[],
    now = Date.now(),
  ): Promise<{ userId: string; appId: string }[]> {
    return appsHearing(this.ctx.db, userIds, now);
  }

  /** Adds an endpoint to an app; returns it with its signing secret (`whsec_...`), which nothing shows again. */
  async addEndpoint(input: {
    appId: string;
    url: string;
  }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    return addWebhookEndpoint(this.ctx.db, input);
  }

  /** Every endpoint, or one app's, oldest first. */
  async listEndpoints(appId?: string): Promise<WebhookEndpoint[]> {
    return listWebhookEndpoints(this.ctx.db, appId);
  }

  async findEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    return findWebhookEndpoint(this.ctx.db, id);
  }

  /** The endpoints with every secret that signs for them now, the newest first. */
  async targets(ids: readonly string[]): Promise<WebhookTarget[]> {
    return webhookTargets(this.ctx.db, ids);
  }

  /** Removes an endpoint and its deliveries. Undefined when there is no such endpoint. */
  async removeEndpoint(id: string): Promise<WebhookEndpoint | undefined> {
    return removeWebhookEndpoint(this.ctx.db, id);
  }

  /** A new secret for the endpoint; the current one signs beside it for keepMs more. */
  async rotateSecret(
    id: string,
    keepMs: number,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string } | undefined> {
    return rotateWebhookSecret(this.ctx.db, id, keepMs);
  }

  /** Disables an endpoint, saying why, or (null) enables it. Undefined when there is no such endpoint. */
  async setEndpointDisabled(
    id: string,
    disabled: { at: number; reason: string } | null,
  ): Promise<WebhookEndpoint | undefined> {
    return setWebhookEndpointDisabled(this.ctx.db, id, disabled);
  }

  /** Fans out up to `limit` outbox signals into deliveries (webhook-outbox.ts); returns how many. */
  async fanOutSignals(options: {
    limit: number;
    now: number;
    rule: CoalescingRule;
    lookbackMs: number;
  }): Promise<number> {
    return fanOutSignals(this.ctx, options);
  }

  /** Leases due deliveries for an attempt (webhook-deliveries.ts). */
  async claimDeliveries(options: {
    limit: number;
    now: number;
    leaseMs: number;
  }): Promise<ClaimedDelivery[]> {
    return claimDeliveries(this.ctx, options);
  }

  async recordDelivered(
    claimed: ClaimedDelivery,
    outcome: { status: number; now: number; rule: CoalescingRule; endpointFailing: boolean },
  ): Promise<void> {
    return recordDelivered(this.ctx, claimed, outcome);
  }

  async recordFailure(
    claimed: ClaimedDelivery,
    outcome: { status: number | null; error: string; now: number; retryAt: number | null },
  ): Promise<{ failingSince: number } | undefined> {
    return recordFailure(this.ctx, claimed, outcome);
  }

  async recordDropped(claimed: ClaimedDelivery, now: number): Promise<void> {
    return recordDropped(this.ctx, claimed, now);
  }

  async releaseDelivery(claimed: ClaimedDelivery): Promise<void> {
    return releaseDelivery(this.ctx, claimed);
  }

  /** The latest deliveries, newest first (of one endpoint; `failed`: whose last attempt failed). */
  async listDeliveries(options: {
    endpointId?: string;
    failed?: boolean;
    limit: number;
  }): Promise<WebhookDelivery[]> {
    return listDeliveries(this.ctx.db, options);
  }

  async findDelivery(id: string): Promise<WebhookDelivery | undefined> {
    return findDelivery(this.ctx.db, id);
  }

  /** Sends a delivery again at once (webhook-deliveries.ts). Undefined when there is no such delivery. */
  async retryDelivery(id: string): Promise<WebhookDelivery | undefined> {
    return retryDelivery(this.ctx, id, Date.now());
  }

  async queue(): Promise<WebhookQueue> {
    return webhookQueue(this.ctx.db);
  }

  /** Removes finished deliveries created before a time; returns how many. */
  async pruneDeliveries(before: number): Promise<number> {
    return pruneDeliveries(this.ctx.db, before);
  }
}
