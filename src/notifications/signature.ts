/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, symmetric scheme `v1`):
 *
 *   webhook-signature: v1,<base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>"))>
 *
 * The key: the spec serialises secrets as `whsec_<base64>`; such a secret's key is the base64-decoded
 * part after the prefix, exactly as the official libraries read it. Any other secret (Cloudflare
 * destinations take free text) is used as its UTF-8 bytes — with the official libraries, pass it raw
 * (e.g. JS `new Webhook(secret, { format: 'raw' })`) or as `whsec_` + base64(secret).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

export function signingKey(secret: string): Buffer {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** The `webhook-signature` value for one attempt. `timestamp` is unix seconds. */
export function signWebhook(id: string, timestamp: number, body: string, secret: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface VerifyInput {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  secret: string;
  /** Unix seconds "now"; with `toleranceSeconds`, older or newer timestamps are refused (replays). */
  nowSeconds?: number;
  toleranceSeconds?: number;
}

/** Receiver-side check: true when one of the space-separated `v1,` signatures matches. */
export function verifyWebhook(input: VerifyInput): boolean {
  const timestamp = Number(input.timestamp);
  if (!/^\d+$/.test(input.timestamp)) return false;
  if (input.nowSeconds !== undefined && input.toleranceSeconds !== undefined) {
    if (Math.abs(input.nowSeconds - timestamp) > input.toleranceSeconds) return false;
  }
  const expected = Buffer.from(signWebhook(input.id, timestamp, input.body, input.secret));
  return input.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
