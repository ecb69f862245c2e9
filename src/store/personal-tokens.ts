// Personal access tokens (docs/developer-console.md), `store.personalTokens`: tokens a user makes for their own
// scripts on /account/tokens. They belong to a built-in app of the user's own (apps.personal_for), made on
// first use, so that /me gives each user one stable pairwise id for all their personal tokens; that app is no
// OAuth client, and its tokens have no grant, so the OAuth endpoints know none of them.
import { randomUUID } from 'node:crypto';
import type { StoreContext } from './context.ts';
import { toTokenInfo } from './rows.ts';
import { storable } from './storable.ts';
import { revokeTokens, type Tokens, tokenQuery } from './tokens.ts';
import type { TokenInfo, User } from './types.ts';

export class PersonalTokens {
  private readonly ctx: StoreContext;
  private readonly tokens: Tokens;

  constructor(ctx: StoreContext, tokens: Tokens) {
    this.ctx = ctx;
    this.tokens = tokens;
  }

  /** The id of the user's built-in app, made on first use (of two that race, one makes it). */
  async appId(user: User): Promise<string> {
    const find = () =>
      this.ctx.db.selectFrom('apps').select('id').where('personal_for', '=', user.id).executeTakeFirst();
    const found = await find();
    if (found) return found.id;
    const id = randomUUID();
    await this.ctx.db
      .insertInto('apps')
      .values({
        id,
        // Unique as app names must be, and no name an operator would choose.
        name: `personal-tokens:${user.id}`,
        sector: id,
        created_at: Date.now(),
        owner_id: user.id,
        personal_for: user.id,
        description: `The personal access tokens of ${user.login}`,
      })
      .onConflict((oc) => oc.column('personal_for').doNothing())
      .execute();
    return (await find())?.id ?? id;
  }

  /** Issues a personal token; it is shown once, only its SHA-256 is kept. */
  async issue(
    user: User,
    input: { scopes: string[]; description: string; expiresAt: number | null },
  ): Promise<{ id: string; token: string }> {
    const appId = await this.appId(user);
    return this.tokens.issue({ userId: user.id, appId, ...input });
  }

  /** The user's personal tokens that are not revoked (expired ones too), newest first. */
  async list(userId: string): Promise<TokenInfo[]> {
    const rows = await tokenQuery(this.ctx.db)
      .where('apps.personal_for', '=', userId)
      .where('tokens.revoked_at', 'is', null)
      .orderBy('tokens.created_at', 'desc')
      .orderBy('tokens.id', 'desc')
      .execute();
    return rows.map(toTokenInfo);
  }

  /** Revokes one of the user's personal tokens by its id: false when they have no such token. */
  async revoke(userId: string, tokenId: string, now = Date.now()): Promise<boolean> {
    if (!storable(tokenId)) return false;
    const found = await tokenQuery(this.ctx.db)
      .where('apps.personal_for', '=', userId)
      .where('tokens.id', '=', tokenId)
      .where('tokens.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!found) return false;
    await revokeTokens(this.ctx.db, 'id', tokenId, now);
    return true;
  }
}
