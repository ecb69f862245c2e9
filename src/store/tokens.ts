// Access tokens: issued to a user for an app, kept as their SHA-256 only, revoked by id or by the token.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { StoreContext } from './context.ts';
import { type IssuedRow, toTokenInfo } from './rows.ts';
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

/** Revokes the tokens whose `column` holds `value` and that are not revoked yet (a revocation keeps its time). */
export async function revokeTokens(
  db: Kysely<DB>,
  column: 'id' | 'hash' | 'grant_id',
  value: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('tokens')
    .set({ revoked_at: now })
    .where(column, '=', value)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes the token with this value, if there is one. */
export async function revokeTokenValue(db: Kysely<DB>, token: string, now = Date.now()): Promise<void> {
  await revokeTokens(db, 'hash', hashToken(token), now);
}

/**
 * The rows of `table` (tokens or grants), each joined with the user and the app it was issued to: its id,
 * user_id and app_id, the user's login and the app's name (`app_name`); for toTokenInfo and toGrant.
 */
export function issuedQuery<T extends 'tokens' | 'grants'>(
  db: Kysely<DB>,
  table: T,
): SelectQueryBuilder<DB, T | 'users' | 'apps', IssuedRow> {
  // Kysely types a join on a table named by a type parameter as no call at all: the query is built over
  // both tables' names, and typed as what it is, over `table` alone.
  const from: 'tokens' | 'grants' = table;
  return db
    .selectFrom(from)
    .innerJoin('users', 'users.id', `${from}.user_id`)
    .innerJoin('apps', 'apps.id', `${from}.app_id`)
    .select([
      `${from}.id`,
      `${from}.user_id`,
      'users.login',
      `${from}.app_id`,
      'apps.name as app_name',
    ]) as SelectQueryBuilder<DB, T | 'users' | 'apps', IssuedRow>;
}

/** The tokens with their user's login and their app's name and sector: rows for toTokenInfo. */
export function tokenQuery(db: Kysely<DB>) {
  return issuedQuery(db, 'tokens').select([
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
  await revokeTokens(db, 'id', row.id, Date.now());
  return toTokenInfo(await tokenQuery(db).where('tokens.id', '=', row.id).executeTakeFirstOrThrow());
}
