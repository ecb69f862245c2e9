// OAuth grants: a user's consent to an app, with the scopes granted. `store.oauth.grants`. The access tokens
// issued under a grant are rows of `tokens` naming it, and its codes and refresh tokens are oauth_records
// naming it: revoking the grant revokes them all in one transaction.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { type GrantRow, toGrant } from './rows.ts';
import type { DB } from './schema.ts';
import { storable } from './storable.ts';
import { hashToken, issuedQuery, revokeTokens } from './tokens.ts';
import type { Grant } from './types.ts';
import { recordGrantRevoked } from './webhook-events.ts';

/**
 * A new grant's id: 256 random bits, base64url (43 characters), drawn again when it begins with '-', so that
 * `chessport tokens revoke <grant-id>` and other tools never read one as an option (docs/oauth.md).
 */
export function newGrantId(): string {
  for (;;) {
    const id = randomBytes(32).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** The grants with their user's login and their app's name: rows for toGrant. */
function grantQuery(db: Kysely<DB>) {
  return issuedQuery(db, 'grants').select([
    'grants.scopes',
    'grants.created_at',
    'grants.last_used_at',
    'grants.revoked_at',
  ]);
}

export interface GrantWrite {
  id: string;
  userId: string;
  appId: string;
  scopes: string[];
  /** The authorization server's own record of the grant. */
  payload: string;
}

export class Grants {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /**
   * Records a grant, or its new scopes and payload. A revoked grant stays revoked: its row is not written
   * (false), so a consent that raced the revocation cannot bring it back.
   */
  async save(grant: GrantWrite, now = Date.now()): Promise<boolean> {
    const { db } = this.ctx;
    const scopes = grant.scopes.join(' ');
    const updated = await db
      .updateTable('grants')
      .set({ scopes, payload: grant.payload })
      .where('id', '=', grant.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) > 0) return true;
    const inserted = await db
      .insertInto('grants')
      .values({
        id: grant.id,
        user_id: grant.userId,
        app_id: grant.appId,
        scopes,
        payload: grant.payload,
        created_at: now,
        last_used_at: null,
        revoked_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** An active (not revoked) grant and the authorization server's payload of it. */
  async find(id: string): Promise<{ grant: Grant; payload: string } | undefined> {
    if (!storable(id)) return undefined;
    const row = await grantQuery(this.ctx.db)
      .select('grants.payload')
      .where('grants.id', '=', id)
      .where('grants.revoked_at', 'is', null)
      .executeTakeFirst();
    return row && { grant: toGrant(row as GrantRow), payload: row.payload };
  }

  /**
   * The user's active grant to the app (the latest, should there be several), with its scopes: whether (and
   * for what) the app may act for them.
   */
  async active(appId: string, userId: string): Promise<Grant | undefined> {
    const row = await grantQuery(this.ctx.db)
      .where('grants.app_id', '=', appId)
      .where('grants.user_id', '=', userId)
      .where('grants.revoked_at', 'is', null)
      .orderBy('grants.created_at', 'desc')
      .orderBy('grants.id')
      .executeTakeFirst();
    return row && toGrant(row);
  }

  /** Grants in the order they were made: every one, or one user's (revoked ones too). */
  async list(userId?: string): Promise<Grant[]> {
    let query = grantQuery(this.ctx.db);
    if (userId !== undefined) query = query.where('grants.user_id', '=', userId);
    const rows = await query.orderBy('grants.created_at').orderBy('grants.id').execute();
    return rows.map(toGrant);
  }

  /** When each of the user's grants last had one of its access tokens used on the API, by grant id. */
  async lastApiUse(userId: string): Promise<Map<string, number>> {
    const rows = await this.ctx.db
      .selectFrom('tokens')
      .select(['grant_id', (eb) => eb.fn.max('last_used_at').as('last_used_at')])
      .where('user_id', '=', userId)
      .where('grant_id', 'is not', null)
      .where('last_used_at', 'is not', null)
      .groupBy('grant_id')
      .execute();
    return new Map(rows.map((row) => [row.grant_id as string, Number(row.last_used_at)]));
  }

  /**
   * Revokes a grant with everything issued under it, at once: its access tokens, its refresh tokens, codes
   * and device codes; and, in the same transaction, a `grant.revoked` webhook event for each endpoint of the
   * app that subscribes to it (webhook-events.ts). Returns the grant (revoked), or undefined when there is none
   * with this id; revoking one already revoked changes nothing (and tells no one). `userId` limits it to that
   * user's grants (a user revoking their own).
   */
  async revoke(id: string, userId?: string, now = Date.now()): Promise<Grant | undefined> {
    // A grant id from the account page's form: one holding U+0000 names no grant (storable.ts).
    if (!storable(id)) return undefined;
    return this.ctx.transaction(async (trx) => {
      let found = trx.selectFrom('grants').select(['id', 'app_id', 'user_id']).where('id', '=', id);
      if (userId !== undefined) found = found.where('user_id', '=', userId);
      // Locked first, as addToken locks it: a token is added either before this, and revoked here, or not.
      const grant = await this.ctx.adapter.lockRows(found).executeTakeFirst();
      if (!grant) return undefined;
      const revoked = await trx
        .updateTable('grants')
        .set({ revoked_at: now })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(revoked.numUpdatedRows) > 0) {
        await recordGrantRevoked(trx, { appId: grant.app_id, userId: grant.user_id, at: now });
      }
      await this.revokeTokens(id, now, trx);
      await trx.deleteFrom('oauth_records').where('grant_id', '=', id).execute();
      return toGrant(await grantQuery(trx).where('grants.id', '=', id).executeTakeFirstOrThrow());
    });
  }

  /** Revokes the access tokens issued under a grant (on `db`, the store's connection or a transaction). */
  async revokeTokens(grantId: string, now = Date.now(), db: Executor = this.ctx.db): Promise<void> {
    await revokeTokens(db, 'grant_id', grantId, now);
  }

  /**
   * Records an OAuth access token that the authorization server made (its value, 256 random bits, is the
   * server's; only its SHA-256 is kept), under its grant, and notes the grant used, if the grant is still
   * active: false (and no token) when it has been revoked. The grant's row is locked meanwhile (SQLite: the
   * store's write lock), so a revocation either comes first, and no token is added, or comes after, and
   * revokes this one too.
   */
  async addToken(input: {
    token: string;
    userId: string;
    appId: string;
    scopes: string[];
    expiresAt: number | null;
    grantId: string;
    createdAt: number;
  }): Promise<boolean> {
    return this.ctx.transaction(async (trx) => {
      const grant = trx
        .selectFrom('grants')
        .select('id')
        .where('id', '=', input.grantId)
        .where('revoked_at', 'is', null);
      if (!(await this.ctx.adapter.lockRows(grant).executeTakeFirst())) return false;
      await trx
        .insertInto('tokens')
        .values({
          id: randomUUID(),
          hash: hashToken(input.token),
          user_id: input.userId,
          app_id: input.appId,
          scopes: input.scopes.join(' '),
          expires_at: input.expiresAt,
          revoked_at: null,
          created_at: input.createdAt,
          grant_id: input.grantId,
        })
        .execute();
      await trx
        .updateTable('grants')
        .set({ last_used_at: Date.now() })
        .where('id', '=', input.grantId)
        .execute();
      return true;
    });
  }
}
