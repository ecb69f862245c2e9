// The server secret, the users (and their password hashes) and the apps (and what makes one an OAuth client):
// what the operator sets up before any game comes in. `store.accounts`.
import { randomBytes, randomUUID } from 'node:crypto';
import type { StoreContext } from './context.ts';
import { alreadyExists, StoreError } from './errors.ts';
import { deleteUserSignIns } from './oauth-records.ts';
import { toApp, toUser } from './rows.ts';
import { storable } from './storable.ts';
import type { App, OAuthClient, User } from './types.ts';

export interface NewApp {
  name: string;
  sector?: string;
  /** Makes the app an OAuth client. */
  oauth?: OAuthClient;
  /** A confidential client's secret as its SHA-256 (hashToken). */
  clientSecretHash?: string;
  /** The user who registers it on /developers (none: the operator's CLI). */
  ownerId?: string;
  homepage?: string;
  description?: string;
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

export class Accounts {
  private readonly ctx: StoreContext;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
  }

  /** The server secret, created on first use (docs/design.md 24). */
  async serverSecret(): Promise<string> {
    const secret = () => this.ctx.db.selectFrom('settings').select('value').where('key', '=', 'secret');
    const found = await secret().executeTakeFirst();
    if (found) return found.value;
    await this.ctx.db
      .insertInto('settings')
      .values({ key: 'secret', value: randomBytes(32).toString('base64url') })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    // Another process may have created it first: its secret is the one.
    return (await secret().executeTakeFirstOrThrow()).value;
  }

  async addUser(input: { login: string; name?: string; email?: string; image?: string }): Promise<User> {
    if (await this.findUser(input.login)) throw new StoreError(`user "${input.login}" already exists`);
    const user: User = {
      id: randomUUID(),
      login: input.login,
      name: input.name ?? null,
      email: input.email ?? null,
      image: input.image ?? null,
      createdAt: Date.now(),
    };
    const { createdAt, ...columns } = user;
    await this.ctx.db
      .insertInto('users')
      .values({ ...columns, created_at: createdAt })
      .execute()
      .catch(alreadyExists(`user "${input.login}" already exists`));
    return user;
  }

  /** The user with this login. */
  async findUser(login: string): Promise<User | undefined> {
    return this.userBy('login', login);
  }

  /** The user with this id. */
  async getUserById(id: string): Promise<User | undefined> {
    return this.userBy('id', id);
  }

  private async userBy(by: 'login' | 'id', value: string): Promise<User | undefined> {
    if (!storable(value)) return undefined;
    const row = await this.ctx.db.selectFrom('users').selectAll().where(by, '=', value).executeTakeFirst();
    return row && toUser(row);
  }

  async listUsers(): Promise<User[]> {
    const rows = await this.ctx.db
      .selectFrom('users')
      .selectAll()
      .orderBy('created_at')
      .orderBy('login')
      .execute();
    return rows.map(toUser);
  }

  async addApp(input: NewApp): Promise<App> {
    if (await this.findApp(input.name)) throw new StoreError(`app "${input.name}" already exists`);
    const id = randomUUID();
    const app: App = {
      id,
      name: input.name,
      sector: input.sector ?? id,
      createdAt: Date.now(),
      oauth: input.oauth ?? null,
      ownerId: input.ownerId ?? null,
      homepage: input.homepage ?? null,
      description: input.description ?? null,
      previousSecretUntil: null,
    };
    await this.ctx.db
      .insertInto('apps')
      .values({
        id,
        name: app.name,
        sector: app.sector,
        created_at: app.createdAt,
        ...clientColumns(input.oauth, input.clientSecretHash),
        owner_id: app.ownerId,
        homepage: app.homepage,
        description: app.description,
      })
      .execute()
      .catch(alreadyExists(`app "${input.name}" already exists`));
    return app;
  }

  /**
   * Makes an app an OAuth client, changes what it is as one, or (client null) makes it none. A confidential
   * client keeps its secret unless a new one's hash is given.
   */
  async setAppClient(appId: string, client: OAuthClient | null, secretHash?: string): Promise<void> {
    const keep = client?.type === 'confidential' && secretHash === undefined;
    const { client_secret_hash, ...others } = clientColumns(client, secretHash);
    await this.ctx.db
      .updateTable('apps')
      .set(keep ? others : { ...others, client_secret_hash })
      .where('id', '=', appId)
      .execute();
  }

  async findApp(name: string): Promise<App | undefined> {
    if (!storable(name)) return undefined;
    const row = await this.ctx.db.selectFrom('apps').selectAll().where('name', '=', name).executeTakeFirst();
    return row && toApp(row);
  }

  /**
   * The app with this id (an OAuth client's client_id), and a confidential client's secret hashes: the
   * current one, and the one before the latest rotation while it still works (its grace period).
   */
  async findAppById(
    id: string,
    now = Date.now(),
  ): Promise<{ app: App; secretHash: string | null; secretHashes: string[] } | undefined> {
    // A client id from a request (client_id, HTTP Basic): one holding U+0000 names no app (storable.ts).
    if (!storable(id)) return undefined;
    const row = await this.ctx.db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    const app = toApp(row, now);
    const current = row.client_secret_hash === null ? [] : [row.client_secret_hash];
    const previous = app.previousSecretUntil === null ? [] : [row.previous_secret_hash as string];
    return { app, secretHash: row.client_secret_hash, secretHashes: [...current, ...previous] };
  }

  /** Whether the operator let the user use the developer console (DEVELOPER_CONSOLE=invite). */
  async isDeveloper(userId: string): Promise<boolean> {
    if (!storable(userId)) return false;
    const row = await this.ctx.db
      .selectFrom('users')
      .select('developer')
      .where('id', '=', userId)
      .executeTakeFirst();
    return row?.developer === 1;
  }

  /** Marks the user a developer, or (false) not one: their apps stay, the console is closed to them. */
  async setDeveloper(userId: string, developer: boolean): Promise<void> {
    await this.ctx.db
      .updateTable('users')
      .set({ developer: developer ? 1 : 0 })
      .where('id', '=', userId)
      .execute();
  }

  /**
   * Sets (or with null, removes) the user's password hash and, in the same transaction, ends every session of
   * theirs: the server's sign-ins and the authorization server's (their records, oauth-records.ts). A browser
   * signed in with the old password is signed in no more.
   */
  async setPasswordHash(userId: string, hash: string | null): Promise<void> {
    await this.ctx.transaction(async (trx) => {
      await trx.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();
      await deleteUserSignIns(trx, userId);
    });
  }

  /** Ends every session of the user: the server's sign-ins and the authorization server's (signing out everywhere). */
  async endSignIns(userId: string): Promise<void> {
    await this.ctx.transaction(async (trx) => deleteUserSignIns(trx, userId));
  }

  /** The user with this login and their password hash (null: they have none). */
  async findPasswordHash(login: string): Promise<{ user: User; hash: string | null } | undefined> {
    // A login from the sign-in form: one holding U+0000 names no user (storable.ts).
    if (!storable(login)) return undefined;
    const row = await this.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('login', '=', login)
      .executeTakeFirst();
    return row && { user: toUser(row), hash: row.password_hash };
  }

  /** Every app but the deleted ones, oldest first. */
  async listApps(): Promise<App[]> {
    const rows = await this.ctx.db
      .selectFrom('apps')
      .selectAll()
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('name')
      .execute();
    return rows.map((row) => toApp(row));
  }
}
