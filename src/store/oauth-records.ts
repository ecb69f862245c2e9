// What the OAuth authorization server keeps besides grants and access tokens: authorization codes, refresh
// tokens, device codes, sessions and interactions, one row each under the SHA-256 of its id (the id of a code
// or refresh token is the credential itself, and a session's is the value of a cookie), the device flow's
// user codes under their SHA-256 too. A record that signs a user in names the user, so that a change of their
// password ends their sessions. A record past its expiry is never handed out, and is deleted by
// `deleteExpired`. `store.oauth.records`.
import type { Executor, StoreContext } from './context.ts';
import { storable } from './storable.ts';
import { hashToken } from './tokens.ts';

export interface OAuthRecordWrite {
  /** JSON. */
  payload: string;
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  /**
   * The user the record signs in (a sign-in session, an interaction that signed in), whose password change
   * ends it; null for the rest (codes and tokens, which belong to grants).
   */
  userId: string | null;
  expiresAt: number | null;
}

export interface OAuthRecord {
  payload: string;
  /** When the record (a code, a refresh token) was used up, in ms; null while it is not. */
  consumedAt: number | null;
}

/** Deletes the user's sign-in records (their userId's), in the caller's transaction: every session of theirs ends. */
export async function deleteUserSignIns(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('oauth_records').where('user_id', '=', userId).execute();
}

export class OAuthRecords {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /** Writes a record, or replaces its payload; a record once consumed stays consumed. */
  async save(model: string, id: string, record: OAuthRecordWrite): Promise<void> {
    const columns = {
      payload: record.payload,
      grant_id: record.grantId,
      uid: record.uid,
      user_code: record.userCode === null ? null : hashToken(record.userCode),
      user_id: record.userId,
      expires_at: record.expiresAt,
    };
    await this.ctx.db
      .insertInto('oauth_records')
      .values({ model, id: hashToken(id), consumed_at: null, ...columns })
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(columns))
      .execute();
  }

  /** The record of this model with this id (or uid, or user code), unless it has expired. */
  async find(
    model: string,
    by: 'id' | 'uid' | 'user_code',
    value: string,
    now = Date.now(),
  ): Promise<OAuthRecord | undefined> {
    // A uid from a request's path or cookie: one holding U+0000 names no record (storable.ts).
    if (!storable(value)) return undefined;
    const key = by === 'uid' ? value : hashToken(value);
    const row = await this.ctx.db
      .selectFrom('oauth_records')
      .select(['payload', 'consumed_at'])
      .where('model', '=', model)
      .where(by, '=', key)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst();
    return (
      row && { payload: row.payload, consumedAt: row.consumed_at === null ? null : Number(row.consumed_at) }
    );
  }

  /**
   * Marks a record consumed. True when this call did; false when it was already (or is gone): of two requests
   * that use one code or refresh token at once, on one instance or two, exactly one gets true.
   */
  async consume(model: string, id: string, now = Date.now()): Promise<boolean> {
    const result = await this.ctx.db
      .updateTable('oauth_records')
      .set({ consumed_at: now })
      .where('model', '=', model)
      .where('id', '=', hashToken(id))
      .where('consumed_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(model: string, id: string): Promise<void> {
    await this.ctx.db
      .deleteFrom('oauth_records')
      .where('model', '=', model)
      .where('id', '=', hashToken(id))
      .execute();
  }

  /** Deletes the records of a model issued under a grant. */
  async deleteForGrant(model: string, grantId: string): Promise<void> {
    await this.ctx.db
      .deleteFrom('oauth_records')
      .where('model', '=', model)
      .where('grant_id', '=', grantId)
      .execute();
  }

  /**
   * Deletes the records that expired before `now`, and the OAuth access tokens that did (an app refreshing
   * every hour would otherwise leave a row an hour behind it; a token the operator issued stays listed).
   * Returns how many rows went.
   */
  async deleteExpired(now = Date.now()): Promise<number> {
    const { db } = this.ctx;
    const records = await db.deleteFrom('oauth_records').where('expires_at', '<=', now).executeTakeFirst();
    const tokens = await db
      .deleteFrom('tokens')
      .where('grant_id', 'is not', null)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(records.numDeletedRows) + Number(tokens.numDeletedRows);
  }
}
