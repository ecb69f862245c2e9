// What the sync suites do through the CLI: issue a sync token, import games, spell a sync command.
import { cliJson, type Env, issueToken, type Server } from '../helpers/harness.ts';

export const SYNC_SCOPES = 'user.read,games.read,databases.read';

export async function issue(env: Env, user: string, scopes = SYNC_SCOPES, app = 'mirror'): Promise<string> {
  return issueToken(env, user, app, scopes);
}

export async function importInto(env: Env, user: string, database: string, file: string) {
  return (
    await cliJson<{ database: { id: string; slug: string } }>(env, [
      'import',
      file,
      '--user',
      user,
      '--database',
      database,
    ])
  ).database;
}

export const syncArgs = (server: Server, token: string, out: string, extra: string[] = []) => [
  'sync',
  '--base-url',
  server.base,
  '--token',
  token,
  '--out',
  out,
  ...extra,
];
