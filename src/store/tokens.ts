// Access tokens: issued to a user for an app, kept as their SHA-256 only, revoked by id or by the token.
// `store.tokens`. (The OAuth server's access tokens are rows here too, added under their grant: grants.ts.)
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { prepared } from './prepared.ts';
import { type IssuedRow, toTokenInfo } from './rows.ts';
import type { DB } from './schema.ts';
import type { TokenInfo } from './types.ts';

/** How precisely a token's last use is kept (touch). */
export const LAST_USE_PRECISION_MS = 60_000;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
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
    'tokens.description',
    'tokens.last_used_at',
  ]);
}

/** Revokes the tokens whose `column` holds `value` and that are not revoked yet (a revocation keeps its time). */
export async function revokeTokens(
  db: Executor,
  column: 'id' | 'hash' | 'grant_id' | 'app_id',
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

export class Tokens {
  private readonly ctx: StoreContext;
  /** The token lookup of every API request, compiled once (prepared.ts). */
  private readonly byHash;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
    this.byHash = prepared(ctx.reader, 1, (hash: string) =>
      tokenQuery(ctx.db).where('tokens.hash', '=', hash),
    );
  }

  /** Issues a token: `cp_` and 256 random bits. Only its SHA-256 is kept. */
  async issue(input: {
    userId: string;
    appId: string;
    scopes: string[];
    expiresAt: number | null;
    description?: string;
  }): Promise<{ id: string; token: string }> {
    const token = `cp_${randomBytes(32).toString('base64url')}`;
    const id = randomUUID();
    await this.ctx.db
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
        description: input.description ?? null,
      })
      .execute();
    return { id, token };
  }

  /** The token with this SHA-256, whatever its state: the caller checks expiry and revocation. */
  async findByHash(hash: string): Promise<TokenInfo | undefined> {
    const [row] = await this.byHash(hash);
    return row && toTokenInfo(row);
  }

  async list(): Promise<TokenInfo[]> {
    const rows = await tokenQuery(this.ctx.db).orderBy('tokens.created_at').orderBy('tokens.id').execute();
    return rows.map(toTokenInfo);
  }

  /** Revokes by token id or by the token itself. Returns the revoked token, undefined when none matched. */
  async revoke(tokenOrId: string): Promise<TokenInfo | undefined> {
    const { db } = this.ctx;
    const row = await db
      .selectFrom('tokens')
      .select('id')
      .where((eb) => eb.or([eb('id', '=', tokenOrId), eb('hash', '=', hashToken(tokenOrId))]))
      .executeTakeFirst();
    if (!row) return undefined;
    await revokeTokens(db, 'id', row.id, Date.now());
    return toTokenInfo(await tokenQuery(db).where('tokens.id', '=', row.id).executeTakeFirstOrThrow());
  }

  /**
   * Notes that the token authenticated a request now. To the minute: a token whose last use is less than a
   * minute old is not written again, so a busy token costs a write a minute, not one a request. Never waits
   * for another writer (DialectAdapter.writeIfFree): while an import holds a SQLite store's write lock the
   * note is skipped, and a later request takes it. Returns whether it was written.
   */
  async touch(token: TokenInfo, now = Date.now()): Promise<boolean> {
    if (token.lastUsedAt !== null && now - token.lastUsedAt < LAST_USE_PRECISION_MS) return false;
    const { db, adapter } = this.ctx;
    return adapter.writeIfFree(
      db,
      db
        .updateTable('tokens')
        .set({ last_used_at: now })
        .where('id', '=', token.id)
        .where((eb) =>
          eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - LAST_USE_PRECISION_MS)]),
        ),
    );
  }

  /** Revokes the token with this value, if there is one (the OAuth server's revocation endpoint). */
  async revokeValue(token: string): Promise<void> {
    await revokeTokens(this.ctx.db, 'hash', hashToken(token), Date.now());
  }
}
