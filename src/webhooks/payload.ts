// The one event (docs/webhooks.md#the-event): `changes.available`, a signal that carries who, never what.
// The receiver reads the user's changes feed with its token to learn what changed.

export const EVENT_TYPE = 'changes.available';

/** The body of a delivery, in the Standard Webhooks form: type, timestamp (of the latest change), data. */
export function eventBody(pairwiseUserId: string, lastChangeAt: number): string {
  return JSON.stringify({
    type: EVENT_TYPE,
    timestamp: new Date(lastChangeAt).toISOString(),
    data: { user: pairwiseUserId },
  });
}
