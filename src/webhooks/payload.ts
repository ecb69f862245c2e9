// The events' bodies (docs/webhooks.md#events), in the Standard Webhooks form: type, timestamp, data. Each
// carries who, never what: `data.user` is the user's pairwise id for the app, the `id` that /me gives it.
// - `changes.available`: the user's games changed (timestamp: the latest change); the receiver reads the
//   user's changes feed with its token to learn what changed. Its form never changes.
// - `grant.revoked`: the user's grant to the app was revoked (timestamp and data.revokedAt: when); the app no
//   longer acts for the user, and should delete what it keeps of them.
// - `ping`: a test event that someone asked for (timestamp: when), data.user being theirs.
import type { WebhookEventType } from '../store/index.ts';

export const EVENT_TYPE = 'changes.available';

/** The body of a `changes.available` delivery: type, timestamp (of the latest change), data. */
export function eventBody(pairwiseUserId: string, lastChangeAt: number): string {
  return JSON.stringify({
    type: EVENT_TYPE,
    timestamp: new Date(lastChangeAt).toISOString(),
    data: { user: pairwiseUserId },
  });
}

/** The body of a delivery of any event, `at` being when it happened (the latest change, for changes). */
export function deliveryBody(type: WebhookEventType, pairwiseUserId: string, at: number): string {
  if (type === 'changes.available') return eventBody(pairwiseUserId, at);
  const timestamp = new Date(at).toISOString();
  const data =
    type === 'grant.revoked' ? { user: pairwiseUserId, revokedAt: timestamp } : { user: pairwiseUserId };
  return JSON.stringify({ type, timestamp, data });
}
