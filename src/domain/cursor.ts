// Feed cursors (docs/design.md 20): a position in the change sequence, opaque to clients, versioned, and
// authenticated with keys of the server secret for one reader (the pairwise user id of the token's user and
// app), so a cursor of another user, of an app of another sector (apps of one sector share the pairwise id,
// and so their cursors) or of another server is refused, not obeyed. The reader never appears in one.
//
// v2, issued now: base64url(0x02 ‖ iv ‖ AES-256-GCM(position as 8 bytes) ‖ tag), always 50 characters. The
// position is encrypted because the change sequence is shared by every user: a readable one showed a user
// paging with limit=1 how many writes other users made in between. The iv is an HMAC of the reader and the
// position (SIV-style), so one position gives one cursor: the same page has the same body and ETag, and
// If-None-Match keeps giving 304. Distinct positions get distinct ivs (96 bits of a PRF), as GCM needs; a
// repeated cursor tells only that the position is the same. Both keys come from the secret through HKDF.
//
// v1, issued before: base64url("v1.<seq>") "." base64url(HMAC-SHA256(secret, "chessport-cursor\0<reader>\0v1.<seq>")).
// Still accepted, since cursors do not expire; the page it asks for answers with a v2 cursor.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const V2 = 2;
const IV_BYTES = 12;
const POSITION_BYTES = 8;
const TAG_BYTES = 16;
const V2_BYTES = 1 + IV_BYTES + POSITION_BYTES + TAG_BYTES;
/** Unpadded base64url of V2_BYTES. */
const V2_LENGTH = Math.ceil((V2_BYTES * 8) / 6);

const V1_PAYLOAD = /^v1\.(0|[1-9][0-9]{0,15})$/;
const V1_MAX_LENGTH = 128;

interface Keys {
  secret: string;
  iv: Buffer;
  cipher: Buffer;
}
// A process has one secret; the keys of the last one are kept.
let keys: Keys | undefined;

function keysOf(secret: string): Keys {
  if (keys?.secret !== secret) {
    const derive = (use: string) =>
      Buffer.from(hkdfSync('sha256', secret, '', `chessport feed cursor v2 ${use}`, 32));
    keys = { secret, iv: derive('iv'), cipher: derive('cipher') };
  }
  return keys;
}

/** The additional data every v2 cursor of this reader is authenticated with. */
function associated(reader: string): Buffer {
  return Buffer.from(`chessport-cursor\0v2\0${reader}`);
}

/** The iv of a position for a reader: an HMAC of both (the position's 8 bytes last, so no two inputs meet). */
function ivOf(key: Buffer, aad: Buffer, position: Buffer): Buffer {
  return createHmac('sha256', key).update(aad).update(position).digest().subarray(0, IV_BYTES);
}

export function encodeCursor(secret: string, reader: string, seq: number): string {
  const { iv: ivKey, cipher: key } = keysOf(secret);
  const aad = associated(reader);
  const position = Buffer.alloc(POSITION_BYTES);
  position.writeBigUInt64BE(BigInt(seq));
  const iv = ivOf(ivKey, aad, position);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const sealed = Buffer.concat([cipher.update(position), cipher.final()]);
  return Buffer.concat([Buffer.of(V2), iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** The position of a cursor this server issued to this reader (either version); undefined for anything else. */
export function decodeCursor(secret: string, reader: string, cursor: string): number | undefined {
  return cursor.includes('.') ? decodeV1(secret, reader, cursor) : decodeV2(secret, reader, cursor);
}

function decodeV2(secret: string, reader: string, cursor: string): number | undefined {
  if (cursor.length !== V2_LENGTH) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  // Re-encoding refuses characters outside base64url and non-canonical forms that decode to the same bytes.
  if (bytes.length !== V2_BYTES || bytes[0] !== V2 || bytes.toString('base64url') !== cursor)
    return undefined;
  const iv = bytes.subarray(1, 1 + IV_BYTES);
  const sealed = bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + POSITION_BYTES);
  const tag = bytes.subarray(1 + IV_BYTES + POSITION_BYTES);
  const { iv: ivKey, cipher: key } = keysOf(secret);
  const aad = associated(reader);
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  let position: Buffer;
  try {
    position = Buffer.concat([decipher.update(sealed), decipher.final()]);
  } catch {
    return undefined; // altered, another reader's or another secret's
  }
  // Only the cursor this server would issue for the position: its iv is the position's.
  if (!timingSafeEqual(iv, ivOf(ivKey, aad, position))) return undefined;
  const seq = position.readBigUInt64BE();
  return seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : undefined;
}

function v1Signature(secret: string, reader: string, payload: string): string {
  return createHmac('sha256', secret).update(`chessport-cursor\0${reader}\0${payload}`).digest('base64url');
}

function decodeV1(secret: string, reader: string, cursor: string): number | undefined {
  if (cursor.length > V1_MAX_LENGTH) return undefined;
  const head = cursor.slice(0, cursor.indexOf('.'));
  const match = V1_PAYLOAD.exec(Buffer.from(head, 'base64url').toString('latin1'));
  const seq = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(seq)) return undefined;
  // Comparing the whole re-encoded cursor also refuses non-canonical base64 that decodes to the same bytes.
  const payload = `v1.${seq}`;
  const expected = Buffer.from(
    `${Buffer.from(payload).toString('base64url')}.${v1Signature(secret, reader, payload)}`,
  );
  const given = Buffer.from(cursor);
  return given.length === expected.length && timingSafeEqual(given, expected) ? seq : undefined;
}
