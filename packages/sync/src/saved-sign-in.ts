// The OAuth sign-in of a mirror, kept beside it in <out>/oauth-tokens.json: the server's API it is for, the
// token endpoint and client id that refresh it, and the tokens. Readable by its owner only (0600, whatever
// the umask), like the mirror, and never on a command line. Each new pair replaces the file whole (a temp
// file, fsync, rename, fsync of the folder): the refresh token rotates, and the one a crash left behind must
// be the newest, since a spent one revokes the grant when it is sent again.
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { TokenSet } from '@chessport/client';

export const TOKENS_FILE = 'oauth-tokens.json';

export interface SavedSignIn {
  /** The API the tokens are for (`https://chess.example.org/api/v1`): they are sent nowhere else. */
  apiBase: string;
  tokenEndpoint: string;
  clientId: string;
  tokens: TokenSet;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';
const isTextOrNull = (value: unknown) => value === null || isText(value);

/** The saved sign-in, or undefined when there is none; a damaged file is an Error that says what to do. */
export function readSignIn(file: string): SavedSignIn | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let saved: Partial<SavedSignIn> | undefined;
  try {
    saved = JSON.parse(text) as Partial<SavedSignIn>;
  } catch {
    saved = undefined;
  }
  const tokens = saved?.tokens as Partial<TokenSet> | undefined;
  if (
    !saved ||
    !isText(saved.apiBase) ||
    !isText(saved.tokenEndpoint) ||
    !isText(saved.clientId) ||
    !tokens ||
    !isText(tokens.accessToken) ||
    !isTextOrNull(tokens.refreshToken) ||
    !(tokens.expiresAt === null || typeof tokens.expiresAt === 'number') ||
    !isTextOrNull(tokens.scope)
  )
    throw new Error(`${file} is damaged: sign in again with --login (or give a token with --token)`);
  return saved as SavedSignIn;
}

/** Replaces the file with `signIn`, durably, mode 0600. */
export function writeSignIn(file: string, signIn: SavedSignIn): void {
  const temp = `${file}.tmp-${process.pid}`;
  // A new temp file, never one that is there (a link would take the tokens wherever it points).
  rmSync(temp, { force: true });
  const fd = openSync(temp, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, `${JSON.stringify(signIn, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}
