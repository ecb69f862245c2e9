// Why a sync stopped, in terms a caller can act on (the CLI maps each reason to an exit code).
import { ChessportError, ChessportOAuthError } from '@chessport/client';

export type SyncFailure =
  | 'unauthorized'
  | 'forbidden'
  | 'cursor_rejected'
  | 'busy'
  | 'other_server'
  | 'other_reader'
  | 'login_denied'
  | 'login_expired';

export class SyncError extends Error {
  readonly reason: SyncFailure;
  constructor(reason: SyncFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

// user.read: /me tells whose the token is, which the mirror must be (owner.ts).
export const SYNC_SCOPES = ['user.read', 'games.read', 'databases.read'] as const;

/** The server's description as a sentence, so that the advice after it reads as one. */
const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

/**
 * A 401 or 403, or a refresh token the server refuses, as the SyncError that stops the run; undefined for
 * anything else.
 */
export function authFailure(error: unknown): SyncError | undefined {
  if (error instanceof ChessportOAuthError && error.error !== 'unexpected_response') {
    return new SyncError(
      'unauthorized',
      `the server refused the saved sign-in's refresh token (${error.status} ${error.error}` +
        `${error.error_description ? `: ${sentence(error.error_description)}` : '.'}) It has expired, was ` +
        'revoked (on the account page, or by the operator), or was used before. Sign in again with --login; ' +
        'the mirror and its cursor are kept.',
      { cause: error },
    );
  }
  if (!(error instanceof ChessportError)) return undefined;
  if (error.status === 401) {
    return new SyncError(
      'unauthorized',
      `the server refused the token (401 ${error.error}): ${sentence(error.error_description)} ` +
        'Get a new token and run again; the mirror and its cursor are kept.',
      { cause: error },
    );
  }
  if (error.status === 403) {
    return new SyncError(
      'forbidden',
      `the token lacks a scope the sync needs (403 ${error.error}): ${sentence(error.error_description)} ` +
        `The sync needs ${SYNC_SCOPES.slice(0, -1).join(', ')} and ${SYNC_SCOPES.at(-1)}.`,
      { cause: error },
    );
  }
  return undefined;
}

/**
 * A 400 on the saved cursor: a cursor the server did not issue to this reader. The reader was checked first
 * (owner.ts), so the cursor itself is at fault, such as one damaged in the file.
 */
export function cursorRejected(error: unknown): SyncError | undefined {
  if (!(error instanceof ChessportError) || error.status !== 400) return undefined;
  return new SyncError(
    'cursor_rejected',
    `the server no longer accepts the saved cursor: ${sentence(error.error_description)} ` +
      'Run again with --full to start over.',
    { cause: error },
  );
}
