// Pairwise pseudonymous user ids (docs/design.md 23): stable per app sector, unlinkable across sectors.
import { createHmac } from 'node:crypto';

/** HMAC-SHA256 of (sector, user) under the server secret, shaped as an RFC 9562 version 8 UUID. */
export function pairwiseId(secret: string, sector: string, userId: string): string {
  const bytes = createHmac('sha256', secret)
    .update(`pairwise\0${sector}\0${userId}`)
    .digest()
    .subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80; // version 8: custom
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
