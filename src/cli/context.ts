// What every command shares: the settings (environment, overridden by global flags) and the open store.
import type { Command } from 'commander';
import { openStore, type Store, type User } from '../store/index.ts';
import { CliError, loadSettings, type Settings } from './settings.ts';

export function settingsOf(command: Command): Settings {
  const settings = loadSettings();
  const { databaseUrl } = command.optsWithGlobals() as { databaseUrl?: string };
  if (databaseUrl) settings.databaseUrl = databaseUrl;
  return settings;
}

export async function withStore<T>(
  command: Command,
  fn: (store: Store, settings: Settings) => Promise<T>,
): Promise<T> {
  const settings = settingsOf(command);
  const store = await openStore(settings.databaseUrl, { poolMax: settings.pgPoolMax });
  try {
    return await fn(store, settings);
  } finally {
    await store.close();
  }
}

export async function requireUser(store: Store, login: string): Promise<User> {
  const user = await store.findUser(login);
  if (!user) throw new CliError(`no user "${login}" (create it with: chessport users add ${login})`);
  return user;
}

export const jsonOption = ['--json', 'print the result as JSON'] as const;
