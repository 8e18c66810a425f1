/**
 * Gateway key values: `swk_` + 40 base62 characters (≈238 bits), shown once at creation and at each
 * roll. Only the SHA-256 (lowercase hex) is stored and looked up; the gateway hashes what a client
 * presents and finds the key by that digest, so a copy of the database grants no access.
 */
import { randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'swk_';
const KEY_LENGTH = 40;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function generateKeyValue(): string {
  let out = KEY_PREFIX;
  while (out.length < KEY_PREFIX.length + KEY_LENGTH) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < KEY_PREFIX.length + KEY_LENGTH) out += ALPHABET[byte % 62];
    }
  }
  return out;
}
