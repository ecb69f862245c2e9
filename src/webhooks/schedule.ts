// When deliveries go (docs/webhooks.md#coalescing and #retries): the coalescing of a user's changes per
// endpoint, and the retries of a failed attempt.
import type { CoalescingRule } from '../store/index.ts';

export interface CoalescingPolicy {
  /** The least time between two deliveries of one endpoint and user while changes keep coming. */
  baseMs: number;
  /** The longest such time. */
  maxMs: number;
  /** A delivery that carried at least this many changes doubles the time before the next one. */
  burstChanges: number;
}

export const DEFAULT_COALESCING: CoalescingPolicy = { baseMs: 1000, maxMs: 60_000, burstChanges: 100 };

/**
 * The first change after a quiet spell is delivered at once. A change while the previous delivery is recent
 * waits until a spacing after it: baseMs, or, after a delivery that carried a burst of changes (an import),
 * twice the previous spacing up to maxMs. Meanwhile every later change joins that delivery. So one edit is
 * delivered at once, edits in a row about one a second, and an import a handful of times in all.
 *
 * A quiet spell is as long as the spacing, but after a burst it is maxMs: an import's batches may commit
 * further apart than the spacing (a busy machine, a slow store), and each would otherwise start over, a
 * delivery per batch. Within maxMs of a burst's delivery the spacing keeps doubling, and a change that comes
 * after the spacing has passed goes at once.
 */
export function coalescingRule(policy: CoalescingPolicy = DEFAULT_COALESCING): CoalescingRule {
  return (previous, now) => {
    if (!previous || previous.sentAt === null) return { dueAt: now, spacingMs: 0 };
    const burst = previous.changes >= policy.burstChanges;
    const spacingMs = burst
      ? Math.min(policy.maxMs, Math.max(policy.baseMs, previous.spacingMs * 2))
      : policy.baseMs;
    const quietMs = burst ? policy.maxMs : spacingMs;
    if (now - previous.sentAt >= quietMs) return { dueAt: now, spacingMs: 0 };
    return { dueAt: Math.max(now, previous.sentAt + spacingMs), spacingMs };
  };
}

/**
 * The default waits after each failed attempt, about three days in all (Svix's schedule, continued): twelve
 * attempts, then the delivery fails.
 */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
];

/** How much a wait varies either way, so that the retries of many deliveries spread out. */
const JITTER = 0.1;

/** When the delivery is tried again after its attempt-th attempt failed; null when that was the last. */
export function retryAt(
  schedule: readonly number[],
  attempt: number,
  now: number,
  random = Math.random,
): number | null {
  const wait = schedule[attempt - 1];
  if (wait === undefined) return null;
  return now + Math.round(wait * (1 + JITTER * (2 * random() - 1)));
}
