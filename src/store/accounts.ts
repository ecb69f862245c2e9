// The server secret, the users and the apps: what the operator sets up before any game comes in.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { alreadyExists, StoreError } from './errors.ts';
import { toApp, toUser } from './rows.ts';
import type { DB } from './schema.ts';
import type { App, User } from './types.ts';

/** The server secret, created on first use (docs/design.md 24). */
export async function serverSecret(db: Kysely<DB>): Promise<string> {
  const secret = () => db.selectFrom('settings').select('value').where('key', '=', 'secret');
  const found = await secret().executeTakeFirst();
  if (found) return found.value;
  await db
    .insertInto('settings')
    .values({ key: 'secret', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  // Another process may have created it first: its secret is the one.
  return (await secret().executeTakeFirstOrThrow()).value;
}

export async function addUser(
  db: Kysely<DB>,
  input: { login: string; name?: string; email?: string; image?: string },
): Promise<User> {
  if (await findUser(db, 'login', input.login)) throw new StoreError(`user "${input.login}" already exists`);
  const user: User = {
    id: randomUUID(),
    login: input.login,
    name: input.name ?? null,
    email: input.email ?? null,
    image: input.image ?? null,
    createdAt: Date.now(),
  };
  const { createdAt, ...columns } = user;
  await db
    .insertInto('users')
    .values({ ...columns, created_at: createdAt })
    .execute()
    .catch(alreadyExists(`user "${input.login}" already exists`));
  return user;
}

/** The user with this login or id. */
export async function findUser(db: Kysely<DB>, by: 'login' | 'id', value: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where(by, '=', value).executeTakeFirst();
  return row && toUser(row);
}

export async function listUsers(db: Kysely<DB>): Promise<User[]> {
  const rows = await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('login').execute();
  return rows.map(toUser);
}

export async function addApp(db: Kysely<DB>, input: { name: string; sector?: string }): Promise<App> {
  if (await findApp(db, input.name)) throw new StoreError(`app "${input.name}" already exists`);
  const id = randomUUID();
  const app: App = { id, name: input.name, sector: input.sector ?? id, createdAt: Date.now() };
  await db
    .insertInto('apps')
    .values({ id, name: app.name, sector: app.sector, created_at: app.createdAt })
    .execute()
    .catch(alreadyExists(`app "${input.name}" already exists`));
  return app;
}

export async function findApp(db: Kysely<DB>, name: string): Promise<App | undefined> {
  const row = await db.selectFrom('apps').selectAll().where('name', '=', name).executeTakeFirst();
  return row && toApp(row);
}

export async function listApps(db: Kysely<DB>): Promise<App[]> {
  const rows = await db.selectFrom('apps').selectAll().orderBy('created_at').orderBy('name').execute();
  return rows.map(toApp);
}
