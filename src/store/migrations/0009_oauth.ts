// 0009: OAuth 2.0 (docs/oauth.md). Apps may be OAuth clients (their type, redirect URIs, whether they may use
// the device flow, and a confidential client's secret as its SHA-256); users may have a password (its scrypt
// hash); a grant records a user's consent to an app, and the access tokens issued under it are rows of
// `tokens` that name it (grant_id), so that the API authenticates them as any other token. Everything else
// the authorization server keeps (codes, refresh tokens, device codes, sessions, interactions) is an
// oauth_records row, keyed by the SHA-256 of its id.
import type { Kysely } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = ({ sqlite: 'integer', postgres: 'bigint' } as const)[dialect];
  await db.schema.alterTable('apps').addColumn('client_type', 'text').execute();
  await db.schema
    .alterTable('apps')
    .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .alterTable('apps')
    .addColumn('device_flow', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('apps').addColumn('client_secret_hash', 'text').execute();
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('grant_id', 'text').execute();
  await db.schema.createIndex('tokens_grant').on('tokens').column('grant_id').execute();
  await db.schema
    .createTable('grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_used_at', bigint)
    .addColumn('revoked_at', bigint)
    .execute();
  await db.schema.createIndex('grants_user_app').on('grants').columns(['user_id', 'app_id']).execute();
  await db.schema
    .createTable('oauth_records')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('user_code', 'text')
    .addColumn('expires_at', bigint)
    .addColumn('consumed_at', bigint)
    .addPrimaryKeyConstraint('oauth_records_pk', ['model', 'id'])
    .execute();
  await db.schema.createIndex('oauth_records_grant').on('oauth_records').column('grant_id').execute();
  await db.schema.createIndex('oauth_records_uid').on('oauth_records').columns(['model', 'uid']).execute();
  await db.schema
    .createIndex('oauth_records_user_code')
    .on('oauth_records')
    .columns(['model', 'user_code'])
    .execute();
  await db.schema.createIndex('oauth_records_expiry').on('oauth_records').column('expires_at').execute();
}
