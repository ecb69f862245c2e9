// OAuth grants: a user's consent to an app, with the scopes granted. The access tokens issued under a grant
// are rows of `tokens` naming it, and its codes and refresh tokens are oauth_records naming it: revoking the
// grant revokes them all in one transaction.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { StoreContext } from './context.ts';
import { type GrantRow, toGrant } from './rows.ts';
import type { DB } from './schema.ts';
import { storable } from './storable.ts';
import { issuedQuery, revokeTokens } from './tokens.ts';
import type { Grant } from './types.ts';

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
export function grantQuery(db: Kysely<DB>) {
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

/**
 * Records a grant, or its new scopes and payload. A revoked grant stays revoked: its row is not written
 * (false), so a consent that raced the revocation cannot bring it back.
 */
export async function saveGrant(db: Kysely<DB>, grant: GrantWrite, now = Date.now()): Promise<boolean> {
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

/** An active (not revoked) grant and its payload. */
export async function findGrantPayload(
  db: Kysely<DB>,
  id: string,
): Promise<{ grant: Grant; payload: string } | undefined> {
  if (!storable(id)) return undefined;
  const row = await grantQuery(db)
    .select('grants.payload')
    .where('grants.id', '=', id)
    .where('grants.revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { grant: toGrant(row as GrantRow), payload: row.payload };
}

/** The user's active grant to the app (the latest, should there be several), with its scopes. */
export async function activeGrant(db: Kysely<DB>, appId: string, userId: string): Promise<Grant | undefined> {
  const row = await grantQuery(db)
    .where('grants.app_id', '=', appId)
    .where('grants.user_id', '=', userId)
    .where('grants.revoked_at', 'is', null)
    .orderBy('grants.created_at', 'desc')
    .orderBy('grants.id')
    .executeTakeFirst();
  return row && toGrant(row);
}

/** Grants in the order they were made: every one, or one user's. */
export async function listGrants(db: Kysely<DB>, userId?: string): Promise<Grant[]> {
  let query = grantQuery(db);
  if (userId !== undefined) query = query.where('grants.user_id', '=', userId);
  const rows = await query.orderBy('grants.created_at').orderBy('grants.id').execute();
  return rows.map(toGrant);
}

/**
 * Revokes a grant with everything issued under it: its access tokens, its refresh tokens, codes and device
 * codes. Returns the grant (revoked), or undefined when there is none with this id; revoking one already
 * revoked changes nothing. `userId` limits it to that user's grants (a user revoking their own).
 */
export async function revokeGrant(
  store: StoreContext,
  id: string,
  userId?: string,
  now = Date.now(),
): Promise<Grant | undefined> {
  // A grant id from the account page's form: one holding U+0000 names no grant (storable.ts).
  if (!storable(id)) return undefined;
  return store.transaction(async (trx) => {
    let found = trx.selectFrom('grants').select('id').where('id', '=', id);
    if (userId !== undefined) found = found.where('user_id', '=', userId);
    // Locked first, as addGrantToken locks it: a token is added either before this, and revoked here, or not.
    if (store.dialect === 'postgres') found = found.forUpdate();
    if (!(await found.executeTakeFirst())) return undefined;
    await trx
      .updateTable('grants')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
    await revokeGrantTokens(trx, id, now);
    await trx.deleteFrom('oauth_records').where('grant_id', '=', id).execute();
    return toGrant(await grantQuery(trx).where('grants.id', '=', id).executeTakeFirstOrThrow());
  });
}

/** Revokes the access tokens issued under a grant. */
export async function revokeGrantTokens(db: Kysely<DB>, grantId: string, now = Date.now()): Promise<void> {
  await revokeTokens(db, 'grant_id', grantId, now);
}
