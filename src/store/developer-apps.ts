// What a developer owns on /developers (docs/developer-console.md), `store.developers`: their apps, and their
// apps' webhook endpoints and deliveries, each found only through its owner. Every lookup names the owner, so
// another developer's id (or text that is no id at all) finds nothing, as the API answers another user's
// game. Deleting an app revokes every grant and token of it and removes its endpoints in one transaction.
import type { StoreContext } from './context.ts';
import { toApp } from './rows.ts';
import { storable } from './storable.ts';
import { revokeTokens } from './tokens.ts';
import type { App, WebhookDelivery, WebhookEndpoint } from './types.ts';
import type { WebhookDeliveries } from './webhook-deliveries.ts';
import type { WebhookEndpoints } from './webhook-endpoints.ts';

export class DeveloperApps {
  private readonly ctx: StoreContext;
  private readonly endpoints: WebhookEndpoints;
  private readonly deliveries: WebhookDeliveries;

  constructor(ctx: StoreContext, endpoints: WebhookEndpoints, deliveries: WebhookDeliveries) {
    this.ctx = ctx;
    this.endpoints = endpoints;
    this.deliveries = deliveries;
  }

  /** The apps the user registered and has not deleted, oldest first. */
  async apps(ownerId: string): Promise<App[]> {
    const rows = await this.ownedQuery(ownerId).orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => toApp(row));
  }

  /** The user's app with this id; undefined for anyone else's, a deleted one, or no app at all. */
  async app(ownerId: string, appId: string): Promise<App | undefined> {
    if (!storable(appId)) return undefined;
    const row = await this.ownedQuery(ownerId).where('id', '=', appId).executeTakeFirst();
    return row && toApp(row);
  }

  private ownedQuery(ownerId: string) {
    return this.ctx.db
      .selectFrom('apps')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('deleted_at', 'is', null)
      .where('personal_for', 'is', null);
  }

  /**
   * Gives the user's confidential app a new secret (its hash); the current one keeps working for `graceMs`
   * more (one kept from an earlier rotation stops now). False when there is no such app of theirs.
   */
  async rotateSecret(ownerId: string, appId: string, hash: string, graceMs: number, now = Date.now()) {
    if (!storable(appId)) return false;
    const rotated = await this.ctx.db
      .updateTable('apps')
      .set((eb) => ({
        previous_secret_hash: eb.ref('client_secret_hash'),
        previous_secret_until: now + graceMs,
        client_secret_hash: hash,
      }))
      .where('id', '=', appId)
      .where('owner_id', '=', ownerId)
      .where('deleted_at', 'is', null)
      .where('client_type', '=', 'confidential')
      .executeTakeFirst();
    return Number(rotated.numUpdatedRows) > 0;
  }

  /**
   * Deletes the user's app: in one transaction it stops being a client (its name is freed), every grant and
   * access token of it is revoked, its codes and refresh tokens go, and its webhook endpoints are removed
   * with their deliveries. False when there is no such app of theirs.
   */
  async deleteApp(ownerId: string, appId: string, now = Date.now()): Promise<boolean> {
    if (!storable(appId)) return false;
    return this.ctx.transaction(async (trx) => {
      const deleted = await trx
        .updateTable('apps')
        .set({
          deleted_at: now,
          name: `deleted:${appId}`,
          client_type: null,
          client_secret_hash: null,
          previous_secret_hash: null,
          previous_secret_until: null,
          redirect_uris: '[]',
          device_flow: 0,
        })
        .where('id', '=', appId)
        .where('owner_id', '=', ownerId)
        .where('deleted_at', 'is', null)
        .where('personal_for', 'is', null)
        .executeTakeFirst();
      if (Number(deleted.numUpdatedRows) === 0) return false;
      const grants = trx.selectFrom('grants').select('id').where('app_id', '=', appId);
      await trx.deleteFrom('oauth_records').where('grant_id', 'in', grants).execute();
      await trx
        .updateTable('grants')
        .set({ revoked_at: now })
        .where('app_id', '=', appId)
        .where('revoked_at', 'is', null)
        .execute();
      await revokeTokens(trx, 'app_id', appId, now);
      const endpoints = trx.selectFrom('webhook_endpoints').select('id').where('app_id', '=', appId);
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', 'in', endpoints).execute();
      await trx.deleteFrom('webhook_endpoints').where('app_id', '=', appId).execute();
      return true;
    });
  }

  /** The webhook endpoint with this id of one of the user's apps. */
  async endpoint(ownerId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
    if (!storable(endpointId)) return undefined;
    const endpoint = await this.endpoints.find(endpointId);
    return endpoint && (await this.app(ownerId, endpoint.appId)) ? endpoint : undefined;
  }

  /** The delivery with this id to an endpoint of one of the user's apps. */
  async delivery(ownerId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
    if (!storable(deliveryId)) return undefined;
    const delivery = await this.deliveries.find(deliveryId);
    return delivery && (await this.endpoint(ownerId, delivery.endpointId)) ? delivery : undefined;
  }
}
