// Access tokens: issued to a user for an app, kept as their SHA-256 only, revoked by id or by the token.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { StoreContext } from './context.ts';
import { toTokenInfo } from './rows.ts';
import type { DB } from './schema.ts';
import type { TokenInfo } from './types.ts';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Issues a token: `cp_` and 256 random bits. Only its SHA-256 is kept. */
export async function issueToken(
  db: Kysely<DB>,
  input: { userId: string; appId: string; scopes: string[]; expiresAt: number | null },
): Promise<{ id: string; token: string }> {
  const token = `cp_${randomBytes(32).toString('base64url')}`;
  const id = randomUUID();
  await db
    .insertInto('tokens')
    .values({
      id,
      hash: hashToken(token),
      user_id: input.userId,
      app_id: input.appId,
      scopes: input.scopes.join(' '),
      expires_at: input.expiresAt,
      revoked_at: null,
      created_at: Date.now(),
    })
    .execute();
  return { id, token };
}

/**
 * Records an OAuth access token that the authorization server made (its value, 256 random bits, is the
 * server's; only its SHA-256 is kept), under its grant, if the grant is still active: false when it has been
 * revoked. The grant's row is locked meanwhile (SQLite: the store's write lock), so a revocation either comes
 * first, and no token is added, or comes after, and revokes this one too.
 */
export async function addGrantToken(
  store: StoreContext,
  input: {
    token: string;
    userId: string;
    appId: string;
    scopes: string[];
    expiresAt: number | null;
    grantId: string;
    createdAt: number;
  },
): Promise<boolean> {
  return store.transaction(async (trx) => {
    let grant = trx
      .selectFrom('grants')
      .select('id')
      .where('id', '=', input.grantId)
      .where('revoked_at', 'is', null);
    if (store.dialect === 'postgres') grant = grant.forUpdate();
    if (!(await grant.executeTakeFirst())) return false;
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

/** Revokes the token with this value, if there is one. */
export async function revokeTokenValue(db: Kysely<DB>, token: string, now = Date.now()): Promise<void> {
  await db
    .updateTable('tokens')
    .set({ revoked_at: now })
    .where('hash', '=', hashToken(token))
    .where('revoked_at', 'is', null)
    .execute();
}

/** The tokens with their user's login and their app's name and sector: rows for toTokenInfo. */
export function tokenQuery(db: Kysely<DB>) {
  return db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .innerJoin('apps', 'apps.id', 'tokens.app_id')
    .select([
      'tokens.id',
      'tokens.user_id',
      'users.login',
      'tokens.app_id',
      'apps.name as app_name',
      'apps.sector',
      'tokens.scopes',
      'tokens.expires_at',
      'tokens.revoked_at',
      'tokens.created_at',
      'tokens.grant_id',
    ]);
}

export async function listTokens(db: Kysely<DB>): Promise<TokenInfo[]> {
  const rows = await tokenQuery(db).orderBy('tokens.created_at').orderBy('tokens.id').execute();
  return rows.map(toTokenInfo);
}

/** Revokes by token id or by the token itself. Returns the revoked token, undefined when none matched. */
export async function revokeToken(db: Kysely<DB>, tokenOrId: string): Promise<TokenInfo | undefined> {
  const row = await db
    .selectFrom('tokens')
    .select('id')
    .where((eb) => eb.or([eb('id', '=', tokenOrId), eb('hash', '=', hashToken(tokenOrId))]))
    .executeTakeFirst();
  if (!row) return undefined;
  await db
    .updateTable('tokens')
    .set({ revoked_at: Date.now() })
    .where('id', '=', row.id)
    .where('revoked_at', 'is', null)
    .execute();
  return toTokenInfo(await tokenQuery(db).where('tokens.id', '=', row.id).executeTakeFirstOrThrow());
}
