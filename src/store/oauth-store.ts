// What the OAuth authorization server keeps (docs/oauth.md), as `store.oauth`: grants, the access tokens
// issued under them (rows of `tokens`, so the API reads them like any other), and the server's other records
// (codes, refresh tokens, sessions) by the SHA-256 of their ids. The queries are in grants.ts, tokens.ts and
// oauth-records.ts.
import type { StoreContext } from './context.ts';
import {
  activeGrant,
  findGrantPayload,
  type GrantWrite,
  listGrants,
  revokeGrant,
  revokeGrantTokens,
  saveGrant,
} from './grants.ts';
import {
  consumeOAuthRecord,
  deleteExpiredOAuthRecords,
  deleteGrantRecords,
  deleteOAuthRecord,
  findOAuthRecord,
  type OAuthRecord,
  type OAuthRecordWrite,
  saveOAuthRecord,
} from './oauth-records.ts';
import { storable } from './storable.ts';
import { addGrantToken, revokeTokenValue } from './tokens.ts';
import type { Grant } from './types.ts';

export class OAuthStore {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /**
   * Records an OAuth access token that the authorization server made, under its grant, and notes the grant
   * used; false (and no token) when the grant has been revoked (tokens.ts).
   */
  async addGrantToken(input: Parameters<typeof addGrantToken>[1]): Promise<boolean> {
    return addGrantToken(this.ctx, input);
  }

  /** Revokes the token with this value, if there is one. */
  async revokeTokenValue(token: string): Promise<void> {
    return revokeTokenValue(this.ctx.db, token);
  }

  /** Records a grant, or its new scopes and payload; false when it has been revoked meanwhile. */
  async saveGrant(grant: GrantWrite): Promise<boolean> {
    return saveGrant(this.ctx.db, grant);
  }

  /** An active (not revoked) grant and the authorization server's payload of it. */
  async findGrant(id: string): Promise<{ grant: Grant; payload: string } | undefined> {
    return findGrantPayload(this.ctx.db, id);
  }

  /** The user's active grant to the app, with its scopes: whether (and for what) the app may act for them. */
  async activeGrant(appId: string, userId: string): Promise<Grant | undefined> {
    return activeGrant(this.ctx.db, appId, userId);
  }

  /** Grants in the order they were made: every one, or one user's (revoked ones too). */
  async listGrants(userId?: string): Promise<Grant[]> {
    return listGrants(this.ctx.db, userId);
  }

  /**
   * Revokes a grant with its access tokens, refresh tokens and codes, at once. `userId` limits it to that
   * user's grants. Undefined when there is no such grant.
   */
  async revokeGrant(id: string, userId?: string): Promise<Grant | undefined> {
    return revokeGrant(this.ctx, id, userId);
  }

  /** Revokes the access tokens issued under a grant. */
  async revokeGrantTokens(grantId: string): Promise<void> {
    return revokeGrantTokens(this.ctx.db, grantId);
  }

  async saveOAuthRecord(model: string, id: string, record: OAuthRecordWrite): Promise<void> {
    return saveOAuthRecord(this.ctx.db, model, id, record);
  }

  /** A record by its id, uid or user code, unless it has expired. */
  async findOAuthRecord(
    model: string,
    by: 'id' | 'uid' | 'user_code',
    value: string,
  ): Promise<OAuthRecord | undefined> {
    // A uid from a request's path or cookie: one holding U+0000 names no record (storable.ts).
    if (!storable(value)) return undefined;
    return findOAuthRecord(this.ctx.db, model, by, value);
  }

  /** Marks a record consumed: true for exactly one of the requests that race to use it. */
  async consumeOAuthRecord(model: string, id: string): Promise<boolean> {
    return consumeOAuthRecord(this.ctx.db, model, id);
  }

  async deleteOAuthRecord(model: string, id: string): Promise<void> {
    return deleteOAuthRecord(this.ctx.db, model, id);
  }

  /** Deletes the records of a model issued under a grant. */
  async deleteGrantRecords(model: string, grantId: string): Promise<void> {
    return deleteGrantRecords(this.ctx.db, model, grantId);
  }

  /** Deletes the records and the OAuth access tokens that have expired; returns how many rows went. */
  async deleteExpiredOAuthRecords(): Promise<number> {
    return deleteExpiredOAuthRecords(this.ctx.db);
  }
}
