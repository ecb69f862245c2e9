// "May this app hear of this user": the one answer to which apps a webhook may tell that a user's games
// changed (docs/webhooks.md). An app hears of a user who has given it an active token with games.read: not
// revoked, not expired.
import { sql } from 'kysely';
import type { Executor } from './context.ts';

/** The apps that may hear of each of these users now, as (user, app) pairs. */
export async function appsHearing(
  db: Executor,
  userIds: readonly string[],
  now: number,
): Promise<{ userId: string; appId: string }[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectFrom('tokens')
    .select(['user_id', 'app_id'])
    .distinct()
    .where('user_id', 'in', userIds)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    // Scopes are space-separated: a whole word, never a prefix of another scope.
    .where(sql<string>`' ' || scopes || ' '`, 'like', '% games.read %')
    .execute();
  return rows.map((row) => ({ userId: row.user_id, appId: row.app_id }));
}

/** Whether the app may hear of the user now. */
export async function mayHear(db: Executor, appId: string, userId: string, now: number): Promise<boolean> {
  return (await appsHearing(db, [userId], now)).some((pair) => pair.appId === appId);
}
