// The webhook outbox's signals (docs/webhooks.md): every write transaction that changes a user's games
// upserts the user's one row in `webhook_signals` before it commits (StoreContext.write), so a signal exists
// exactly when its change does, whatever crashes when. The delivery worker fans them out (webhook-outbox.ts).
import { type Kysely, sql } from 'kysely';
import type { Changes } from './change-allocation.ts';
import type { DB } from './schema.ts';

/**
 * Runs a write transaction's fn with its changes counted, then records the owner's signal when it took any:
 * one upsert per transaction, however many games it wrote.
 */
export async function signalling<T>(
  trx: Kysely<DB>,
  ownerId: string,
  begun: Promise<Changes>,
  fn: (trx: Kysely<DB>, changes: Changes) => Promise<T>,
): Promise<T> {
  const changes = await begun;
  let taken = 0;
  let at = 0;
  const counted: Changes = {
    take: async (n) => {
      const allocation = await changes.take(n);
      taken += n;
      at = allocation.now;
      return allocation;
    },
  };
  const result = await fn(trx, counted);
  if (taken > 0) {
    await sql`
      insert into webhook_signals (user_id, changes, first_at, last_at) values (${ownerId}, ${taken}, ${at}, ${at})
      on conflict (user_id) do update
      set changes = webhook_signals.changes + excluded.changes, last_at = excluded.last_at`.execute(trx);
  }
  return result;
}
