// Feed cursors (DESIGN.md 20): a position in the change sequence, opaque to clients, versioned, and signed
// with the server secret for one reader, so a cursor of another user, app or server is refused, not obeyed.
//
// Format: base64url("v1.<seq>") "." base64url(HMAC-SHA256(secret, "chessport-cursor\0<reader>\0v1.<seq>")).
// The reader (the pairwise user id of the token's user and app) is bound by the MAC only: it never appears.
import { createHmac, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1';
const PAYLOAD = /^v1\.(0|[1-9][0-9]{0,15})$/;
const MAX_LENGTH = 128;

function signature(secret: string, reader: string, payload: string): string {
  return createHmac('sha256', secret).update(`chessport-cursor\0${reader}\0${payload}`).digest('base64url');
}

export function encodeCursor(secret: string, reader: string, seq: number): string {
  const payload = `${VERSION}.${seq}`;
  return `${Buffer.from(payload).toString('base64url')}.${signature(secret, reader, payload)}`;
}

/** The position of a cursor this server issued to this reader; undefined for anything else. */
export function decodeCursor(secret: string, reader: string, cursor: string): number | undefined {
  if (cursor.length > MAX_LENGTH) return undefined;
  const head = cursor.slice(0, Math.max(0, cursor.indexOf('.')));
  const match = PAYLOAD.exec(Buffer.from(head, 'base64url').toString('latin1'));
  const seq = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(seq)) return undefined;
  // Comparing the whole re-encoded cursor also refuses non-canonical base64 that decodes to the same bytes.
  const expected = Buffer.from(encodeCursor(secret, reader, seq));
  const given = Buffer.from(cursor);
  return given.length === expected.length && timingSafeEqual(given, expected) ? seq : undefined;
}
