// What every command shares: the settings (environment, overridden by global flags) and the open store.
import { accessSync, constants } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Command } from 'commander';
import {
  type App,
  type Database,
  isPostgresUrl,
  MigrationFailure,
  type OpenOptions,
  openStore,
  type Store,
  StoreError,
  type User,
} from '../store/index.ts';
import { CliError } from './errors.ts';
import { cliIo, inWorkingFolder } from './io.ts';
import { loadSettings, loadStoreSettings, nonEmpty, type Settings, type StoreSettings } from './settings.ts';
import { storeFailure, storeFailureLine } from './store-failures.ts';
import { checkStoreUrl, maskUrl, sqliteFiles, storeUrlInWorkingFolder } from './store-url.ts';

/** The store's settings, for the commands that only open the store: the server's are not read. */
export function storeSettingsOf(command: Command): StoreSettings {
  return withGlobalFlags(command, loadStoreSettings());
}

/** Every setting, each checked: for the commands that serve (serve, demo). */
export function settingsOf(command: Command): Settings {
  return withGlobalFlags(command, loadSettings());
}

function withGlobalFlags<T extends StoreSettings>(command: Command, settings: T): T {
  const { databaseUrl } = command.optsWithGlobals() as { databaseUrl?: string };
  // An empty flag (`--database-url "$URL"`, the variable unset) opened DATABASE_URL's store, or the default.
  if (databaseUrl !== undefined) settings.databaseUrl = nonEmpty(databaseUrl, '--database-url');
  return settings;
}

const POSTGRES_URL_FORM =
  'write it like postgres://user:password@host:5432/database, percent-encoding @ : / ? # in the password (@ as %40)';

/** The settings' PostgreSQL options of openStore (poolMax: PG_POOL_MAX, unless the caller says otherwise). */
export function postgresOptions(settings: StoreSettings): OpenOptions {
  return { poolMax: settings.pgPoolMax, listenUrl: settings.pgListenUrl, poolMode: settings.pgPoolMode };
}

/** Opens the store of the settings; a store that cannot be opened is a one-line error naming it. */
export async function openCliStore(settings: StoreSettings): Promise<Store> {
  checkStoreUrl(settings.databaseUrl);
  try {
    return await openStore(storeUrlInWorkingFolder(settings.databaseUrl), postgresOptions(settings));
  } catch (error) {
    if (error instanceof MigrationFailure) {
      throw new CliError(`cannot open the store ${maskUrl(settings.databaseUrl)}: ${error.reason}`, {
        cause: error,
      });
    }
    if (error instanceof StoreError) throw error;
    // pg reads the URL when it opens the first connection, and says only "Invalid URL" (a port that is not
    // a number, a bad host): its own parser decides, as it accepts forms that WHATWG URLs refuse.
    if (isPostgresUrl(settings.databaseUrl) && (error as { code?: unknown }).code === 'ERR_INVALID_URL') {
      // The URL is not shown: where it does not parse, its password cannot be told apart to be masked.
      throw new CliError(`invalid DATABASE_URL: ${POSTGRES_URL_FORM}`, { cause: error });
    }
    const failure = storeFailure(error, settings.databaseUrl);
    if (failure) throw new CliError(storeFailureLine(failure), { cause: error });
    const message = `cannot open the store ${maskUrl(settings.databaseUrl)}: ${(error as Error).message}${cantOpenHint(settings.databaseUrl, error)}`;
    throw new CliError(message, { cause: error });
  }
}

/**
 * Why SQLite could not open a store it may read: in WAL mode it creates `<file>-wal` and `<file>-shm` beside
 * the file, so a read-only folder (or file system) makes even reading fail, with "unable to open database file".
 */
function cantOpenHint(url: string, error: unknown): string {
  const [file] = sqliteFiles(url);
  if (file === undefined || (error as { code?: unknown }).code !== 'SQLITE_CANTOPEN') return '';
  const folder = dirname(file);
  try {
    accessSync(inWorkingFolder(folder), constants.W_OK);
    return '';
  } catch {
    return ` (its folder ${folder} is read-only here, and SQLite creates the ${basename(file)}-wal and -shm files there, also to read)`;
  }
}

/**
 * What opening the store did, for the operator: created it, upgraded it (which migrations; the first start of
 * a new version may take seconds to minutes, and no older version opens the store afterwards) or opened it.
 */
export function storeOpening(store: Store): { created: boolean; upgraded: readonly string[] } {
  const applied = store.migrationsApplied;
  const created = applied[0] === '0001_initial';
  return { created, upgraded: created ? [] : applied };
}

export async function withStore<T>(
  command: Command,
  fn: (store: Store, settings: StoreSettings) => Promise<T>,
): Promise<T> {
  const settings = storeSettingsOf(command);
  const store = await openCliStore(settings);
  // On stderr, so that stdout stays the command's result (one JSON document with --json).
  const { upgraded } = storeOpening(store);
  if (upgraded.length > 0) {
    cliIo().stderr.write(
      `chessport: upgraded the store ${maskUrl(settings.databaseUrl)} to this version (migrations ${upgraded.join(', ')})\n`,
    );
  }
  try {
    return await fn(store, settings);
  } catch (error) {
    throw explainedStoreFailure(error, settings.databaseUrl);
  } finally {
    await store.close();
  }
}

/** A failure of the store (full, locked, connection lost) as a CliError saying what to do; others as they are. */
export function explainedStoreFailure(error: unknown, storeUrl: string): unknown {
  if (error instanceof CliError || error instanceof StoreError) return error; // said already
  const failure = storeFailure(error, storeUrl);
  return failure ? new CliError(storeFailureLine(failure), { cause: error }) : error;
}

export async function requireUser(store: Store, login: string): Promise<User> {
  const user = await store.accounts.findUser(login);
  if (!user) throw new CliError(`no user "${login}"${hint('chessport users add', login)}`);
  return user;
}

export async function requireApp(store: Store, name: string): Promise<App> {
  const app = await store.accounts.findApp(name);
  if (!app) throw new CliError(`no app "${name}"${hint('chessport apps add', name)}`);
  return app;
}

/** The command that creates `name`, to be pasted into a shell; none for a blank name, which no command takes. */
export function hint(command: string, name: string): string {
  if (name.trim() === '') return '';
  const word = /^[\w@%+=:,./-]+$/.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`;
  return ` (create it with: ${command} ${word})`;
}

/**
 * The one database that `ref` names among `found` (store.databases.findByRef). Names may repeat, and a slug
 * may be another database's name: a `ref` that names several is refused with their slugs and ids, since
 * picking one could change the wrong one.
 */
export function oneDatabase(found: Database[], ref: string, owner: string): Database | undefined {
  if (found.length <= 1) return found[0];
  const candidates = found.map((d) => `${d.slug} (${d.id})`).join(', ');
  // The slug of one and the name of another: only an id tells them apart.
  if (found.some((d) => d.slug === ref)) {
    throw new CliError(
      `"${ref}" names ${found.length} databases of ${owner}, as a slug and as a name: ${candidates}; give its id`,
    );
  }
  throw new CliError(
    `${found.length} databases of ${owner} are named "${ref}": ${candidates}; give its slug or id`,
  );
}

export const jsonOption = ['--json', 'print the result as JSON'] as const;
