// 0013: the developer console and personal access tokens (docs/developer-console.md). A user may be marked a
// developer (DEVELOPER_CONSOLE=invite); an app may have an owner (the user who registered it on /developers;
// null: the operator's CLI made it), a homepage and a description, the hash of its secret before the latest
// rotation with the time it stops working, and a deletion time (a deleted app keeps its row, since grants and
// tokens name it, but is no client any more). An app with `personal_for` is a user's own built-in app, that of
// their personal access tokens: one per user. A token has a description (personal tokens) and the time it last
// authenticated a request.
import type { Kysely } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = ({ sqlite: 'integer', postgres: 'bigint' } as const)[dialect];
  await db.schema
    .alterTable('users')
    .addColumn('developer', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('apps').addColumn('owner_id', 'text').execute();
  await db.schema.alterTable('apps').addColumn('homepage', 'text').execute();
  await db.schema.alterTable('apps').addColumn('description', 'text').execute();
  await db.schema.alterTable('apps').addColumn('previous_secret_hash', 'text').execute();
  await db.schema.alterTable('apps').addColumn('previous_secret_until', bigint).execute();
  await db.schema.alterTable('apps').addColumn('deleted_at', bigint).execute();
  await db.schema.alterTable('apps').addColumn('personal_for', 'text').execute();
  await db.schema.createIndex('apps_owner').on('apps').column('owner_id').execute();
  await db.schema.createIndex('apps_personal_for').unique().on('apps').column('personal_for').execute();
  await db.schema.alterTable('tokens').addColumn('description', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('last_used_at', bigint).execute();
}
