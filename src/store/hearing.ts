// "May this app hear of this user": the one answer to which apps a webhook may tell that a user's games
// changed (docs/webhooks.md), `store.webhooks.hearing`. An app hears of a user who has given it games.read,
// either as an active token (not revoked, not expired: an operator's, or an OAuth access token) or as an
// OAuth grant not revoked (its access tokens last an hour, the consent until the user takes it back on
// /account).
import { sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';

export class Hearing {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /**
   * The apps that may hear of each of these users now, as (user, app) pairs (read on `db`, the store's
   * connection or a transaction).
   */
  async apps(
    userIds: readonly string[],
    now = Date.now(),
    db: Executor = this.ctx.db,
  ): Promise<{ userId: string; appId: string }[]> {
    if (userIds.length === 0) return [];
    // Scopes are space-separated, in tokens and grants alike: a whole word, never a prefix of another scope.
    const readsGames = sql<string>`' ' || scopes || ' '`;
    const rows = await db
      .selectFrom('tokens')
      .select(['user_id', 'app_id'])
      .where('user_id', 'in', userIds)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .where(readsGames, 'like', '% games.read %')
      .union(
        db
          .selectFrom('grants')
          .select(['user_id', 'app_id'])
          .where('user_id', 'in', userIds)
          .where('revoked_at', 'is', null)
          .where(readsGames, 'like', '% games.read %'),
      )
      .execute();
    return rows.map((row) => ({ userId: row.user_id, appId: row.app_id }));
  }
}
