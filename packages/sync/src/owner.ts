// Whose mirror a folder is: the server it follows and the reader it was made for, the token's pairwise id
// (/me), to which the server also binds its feed cursors. A run checks both before it writes anything, so
// that a token of another user (or app) neither mixes that user's data into the mirror nor, through
// --full, replaces the mirror unasked.
import { SyncError } from './errors.ts';
import type { Mirror } from './mirror.ts';

export interface ReaderCheck {
  full: boolean;
  switchReader: boolean;
  /** Whether the server takes the cursor from this token: it refuses a cursor issued to another reader. */
  cursorAccepted: (cursor: string) => Promise<boolean>;
}

const NOTHING_WRITTEN = 'Nothing was written.';
const TO_REPLACE =
  "Use another --out folder for this token; to replace this mirror with the token's data, run with " +
  '--full --switch-reader.';

/** Another server is refused before any request, so the token is not even sent there; --full may move. */
export function checkServer(mirror: Mirror, apiBase: string, full: boolean): void {
  const followed = mirror.getState('base_url');
  if (full || followed === undefined || followed === apiBase) return;
  throw new SyncError(
    'other_server',
    `${mirror.file} mirrors ${followed}, not ${apiBase}. ${NOTHING_WRITTEN} Use another --out folder; if ` +
      'it is the same server at a new address, --full starts the mirror over from there (for the same reader).',
  );
}

/** Returns when `reader` may write to the mirror: it is the mirror's, the mirror is nobody's yet, or asked. */
export async function checkReader(mirror: Mirror, reader: string, check: ReaderCheck): Promise<void> {
  if (check.full && check.switchReader) return;
  const recorded = mirror.getState('reader');
  if (recorded === reader) return;
  if (recorded !== undefined) {
    throw new SyncError(
      'other_reader',
      `${mirror.file} is the mirror of reader ${recorded}, and this token's reader (its /me id) is ` +
        `${reader}: the token is another user's or another app's, or the server's secret was changed ` +
        `(which changes every reader id). ${NOTHING_WRITTEN} ${TO_REPLACE}`,
    );
  }
  // A mirror of an older sync, which did not record its reader: its cursor tells, if it has one.
  const saved = mirror.getState('cursor');
  if (saved === undefined || (await check.cursorAccepted(saved))) return;
  throw new SyncError(
    'other_reader',
    `${mirror.file} does not record whose mirror it is (an older chessport sync made it), and the server ` +
      "refuses its saved cursor from this token: the token is another user's or another app's, or the " +
      `server's secret was changed. ${NOTHING_WRITTEN} ${TO_REPLACE}`,
  );
}
