// Standard Webhooks signatures (docs/webhooks.md#verifying-a-delivery): `v1,` and the base64 HMAC-SHA256 of
// `webhook-id.webhook-timestamp.body`, keyed with the base64-decoded part of the `whsec_` secret. While a
// rotated secret still signs, the header carries one signature per secret, space-separated.

import { createHmac } from 'node:crypto';

/** The key a `whsec_...` secret stands for. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** The webhook-signature header: one `v1,` signature per secret, in the order given. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
    )
    .join(' ');
}
