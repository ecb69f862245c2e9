// What the sync suites do through the CLI: issue a sync token, import games, spell a sync command (with a
// token, or signing in with --login).
import { type Env, importPgn, issueToken, type Server } from './harness.ts';

export const SYNC_SCOPES = 'user.read,games.read,databases.read';

export async function issue(env: Env, user: string, scopes = SYNC_SCOPES, app = 'mirror'): Promise<string> {
  return issueToken(env, user, app, scopes);
}

export function importInto(env: Env, user: string, database: string, file: string) {
  return importPgn(env, file, user, database);
}

export const syncArgs = (server: Pick<Server, 'base'>, token: string, out: string, extra: string[] = []) => [
  'sync',
  '--base-url',
  server.base,
  '--token',
  token,
  '--out',
  out,
  ...extra,
];

/** `chessport sync` signing in through the device flow (--login) instead of a token. */
export const loginArgs = (server: Pick<Server, 'base'>, out: string, extra: string[] = []) => [
  'sync',
  '--base-url',
  server.base,
  '--login',
  '--out',
  out,
  ...extra,
];
