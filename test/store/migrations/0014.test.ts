// Migration 0014 on a store with webhooks from before it: an endpoint subscribes to every event, a delivery
// pending then is a `changes.available` one that later changes still join (at most one pending per endpoint
// and user), and a `ping` or `grant.revoked` may now be pending beside it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIALECTS, openTestStore } from '../../helpers/dialects.ts';
import { rewindStore } from '../../helpers/stores.ts';

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0014 on ${dialect}`, { skip }, () => {
    test('endpoints subscribe to all; a pending delivery is a change; other events may be pending beside it', async () => {
      const t = await openTestStore(dialect);
      try {
        const ann = (await t.store.accounts.addUser({ login: 'ann' })).id;
        const app = await t.store.accounts.addApp({ name: 'app' });
        const { endpoint } = await t.store.webhooks.endpoints.add({
          appId: app.id,
          url: 'https://example.org/in',
        });
        const row = (id: string) => ({
          id,
          message_id: id,
          endpoint_id: endpoint.id,
          user_id: ann,
          status: 'pending' as const,
          changes: 3,
          version: 0,
          spacing_ms: 0,
          created_at: 1,
          last_change_at: 1,
          due_at: 1,
          attempts: 0,
          // Columns of 0014, which the rewind below takes away with their values.
          event_type: 'ping',
          last_latency_ms: 5,
        });
        await t.store.db.insertInto('webhook_deliveries').values(row('msg_before')).execute();
        // The store as it was before 0014: the columns go, and the migration runs on the next opening.
        await rewindStore(t.url, '0014');
        const store = await t.reopen();
        assert.equal((await store.webhooks.endpoints.find(endpoint.id))?.events, null, 'every event');
        const [before] = await store.webhooks.deliveries.list({ limit: 10 });
        assert.deepEqual(
          [before?.id, before?.eventType, before?.changes, before?.lastLatencyMs],
          ['msg_before', 'changes.available', 3, null],
        );
        // Still at most one pending change per endpoint and user.
        await assert.rejects(
          store.db
            .insertInto('webhook_deliveries')
            .values({ ...row('msg_second'), event_type: 'changes.available' })
            .execute(),
        );
        // A ping beside it, and a grant.revoked.
        const ping = await store.webhooks.events.enqueuePing(endpoint.id, ann);
        assert.equal(ping?.eventType, 'ping');
        await store.db
          .insertInto('webhook_deliveries')
          .values({ ...row('msg_revoked'), event_type: 'grant.revoked' })
          .execute();
        const pending = await store.webhooks.deliveries.list({ endpointId: endpoint.id, limit: 10 });
        assert.deepEqual(pending.map((d) => d.eventType).sort(), [
          'changes.available',
          'grant.revoked',
          'ping',
        ]);
      } finally {
        await t.close();
      }
    });
  });
}
