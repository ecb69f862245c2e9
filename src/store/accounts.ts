// The server secret, the users (and their password hashes) and the apps (and what makes one an OAuth client):
// what the operator sets up before any game comes in.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { alreadyExists, StoreError } from './errors.ts';
import { deleteUserSignIns } from './oauth-records.ts';
import { toApp, toUser } from './rows.ts';
import type { DB } from './schema.ts';
import { storable } from './storable.ts';
import type { App, OAuthClient, User } from './types.ts';

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
  if (!storable(value)) return undefined;
  const row = await db.selectFrom('users').selectAll().where(by, '=', value).executeTakeFirst();
  return row && toUser(row);
}

export async function listUsers(db: Kysely<DB>): Promise<User[]> {
  const rows = await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('login').execute();
  return rows.map(toUser);
}

export interface NewApp {
  name: string;
  sector?: string;
  /** Makes the app an OAuth client. */
  oauth?: OAuthClient;
  /** A confidential client's secret as its SHA-256 (hashToken). */
  clientSecretHash?: string;
}

/** The columns that make an app an OAuth client, or none. */
function clientColumns(client: OAuthClient | null | undefined, secretHash: string | null | undefined) {
  return {
    client_type: client?.type ?? null,
    redirect_uris: JSON.stringify(client?.redirectUris ?? []),
    device_flow: client?.deviceFlow ? 1 : 0,
    client_secret_hash: client?.type === 'confidential' ? (secretHash ?? null) : null,
  };
}

export async function addApp(db: Kysely<DB>, input: NewApp): Promise<App> {
  if (await findApp(db, input.name)) throw new StoreError(`app "${input.name}" already exists`);
  const id = randomUUID();
  const app: App = {
    id,
    name: input.name,
    sector: input.sector ?? id,
    createdAt: Date.now(),
    oauth: input.oauth ?? null,
  };
  await db
    .insertInto('apps')
    .values({
      id,
      name: app.name,
      sector: app.sector,
      created_at: app.createdAt,
      ...clientColumns(input.oauth, input.clientSecretHash),
    })
    .execute()
    .catch(alreadyExists(`app "${input.name}" already exists`));
  return app;
}

/**
 * Makes an app an OAuth client, changes what it is as one, or (client null) makes it none. A confidential
 * client keeps its secret unless a new one's hash is given.
 */
export async function setAppClient(
  db: Kysely<DB>,
  appId: string,
  client: OAuthClient | null,
  secretHash?: string,
): Promise<void> {
  const keep = client?.type === 'confidential' && secretHash === undefined;
  const { client_secret_hash, ...others } = clientColumns(client, secretHash);
  await db
    .updateTable('apps')
    .set(keep ? others : { ...others, client_secret_hash })
    .where('id', '=', appId)
    .execute();
}

export async function findApp(db: Kysely<DB>, name: string): Promise<App | undefined> {
  if (!storable(name)) return undefined;
  const row = await db.selectFrom('apps').selectAll().where('name', '=', name).executeTakeFirst();
  return row && toApp(row);
}

/** The app with this id, and a confidential client's secret hash. */
export async function findAppById(
  db: Kysely<DB>,
  id: string,
): Promise<{ app: App; secretHash: string | null } | undefined> {
  // A client id from a request (client_id, HTTP Basic): one holding U+0000 names no app (storable.ts).
  if (!storable(id)) return undefined;
  const row = await db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
  return row && { app: toApp(row), secretHash: row.client_secret_hash };
}

/**
 * Sets (or with null, removes) the user's password hash and ends every session of theirs, the one write on
 * `trx` (a transaction): a browser signed in with the old password is signed in no more.
 */
export async function setPasswordHash(trx: Kysely<DB>, userId: string, hash: string | null): Promise<void> {
  await trx.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();
  await deleteUserSignIns(trx, userId);
}

/** The user with this login and their password hash (null: they have none). */
export async function findPasswordHash(
  db: Kysely<DB>,
  login: string,
): Promise<{ user: User; hash: string | null } | undefined> {
  // A login from the sign-in form: one holding U+0000 names no user (storable.ts).
  if (!storable(login)) return undefined;
  const row = await db.selectFrom('users').selectAll().where('login', '=', login).executeTakeFirst();
  return row && { user: toUser(row), hash: row.password_hash };
}

export async function listApps(db: Kysely<DB>): Promise<App[]> {
  const rows = await db.selectFrom('apps').selectAll().orderBy('created_at').orderBy('name').execute();
  return rows.map(toApp);
}
