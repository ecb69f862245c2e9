// 0001: the tables of the first version. Every query is scoped by owner (or by a database of the owner): the
// games indexes serve lists, the feed and dedup.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const bigint = ({ sqlite: 'integer', postgres: 'bigint' } as const)[dialect];
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('login', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('email', 'text')
    .addColumn('image', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('sector', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', bigint)
    .addColumn('revoked_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('databases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('private', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_games', 'integer')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('deleted_at', bigint)
    .execute();
  await db.schema
    .createIndex('databases_owner_slug')
    .on('databases')
    .columns(['owner_id', 'slug'])
    .unique()
    .execute();
  await db.schema
    .createTable('games')
    .addColumn(
      'pk',
      ({ sqlite: 'integer', postgres: 'bigserial' } as const)[dialect],
      (c) => ({ sqlite: c.primaryKey().autoIncrement(), postgres: c.primaryKey() })[dialect],
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('database_id', 'text', (c) => c.notNull().references('databases.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('seq', bigint, (c) => c.notNull())
    .addColumn('event', 'text')
    .addColumn('date', 'text')
    .addColumn('result', 'text', (c) => c.notNull())
    .addColumn('eco', 'text')
    .addColumn('white_name', 'text')
    .addColumn('white_elo', 'integer')
    .addColumn('white_fide_id', 'text')
    .addColumn('white_country', 'text')
    .addColumn('black_name', 'text')
    .addColumn('black_elo', 'integer')
    .addColumn('black_fide_id', 'text')
    .addColumn('black_country', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('moves', 'text', (c) => c.notNull())
    .addColumn('fen', 'text', (c) => c.notNull())
    .addColumn('pgn', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Every query is scoped by owner (or by a database of the owner): these serve lists, the feed and dedup.
  await db.schema
    .createIndex('games_owner_list')
    .on('games')
    .columns(['owner_id', 'deleted', 'pk'])
    .execute();
  await db.schema
    .createIndex('games_database_list')
    .on('games')
    .columns(['database_id', 'deleted', 'pk'])
    .execute();
  await db.schema.createIndex('games_owner_seq').on('games').columns(['owner_id', 'seq']).execute();
  await db.schema
    .createIndex('games_database_hash')
    .on('games')
    .columns(['database_id', 'content_hash'])
    .execute();
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sequences')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', bigint, (c) => c.notNull())
    .execute();
  await sql`insert into sequences (name, value) values ('change', 0)`.execute(db);
}
