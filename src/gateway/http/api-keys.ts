/**
 * Static API keys (`gateway.api_keys`): keys written in the config, presented as
 * `Authorization: Bearer <key>` or as the query parameter `?key=<key>` (for clients that cannot set
 * headers). Keys are compared as SHA-256 digests in constant time and never logged. Whether a call
 * needs a key at all, and gateway keys stored as resources, are key-auth.ts's concern.
 */
import { timingSafeEqual } from 'node:crypto';
import { keyDigest } from '../../model/gateway-keys.js';

export class ApiKeys {
  readonly #digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map((key) => Buffer.from(keyDigest(key), 'hex'));
  }

  /**
   * Whether the key whose SHA-256 (lowercase hex, `keyDigest`) is `digest` is one of the configured keys
   * (every key compared, in constant time).
   */
  matches(digest: string): boolean {
    const d = Buffer.from(digest, 'hex');
    let ok = false;
    for (const known of this.#digests) ok = timingSafeEqual(known, d) || ok;
    return ok;
  }
}

/**
 * The key a request presents: the `Authorization: Bearer` token when that header is present (another
 * scheme presents none), else its request-target's `?key=`.
 */
export function presentedKey(header: string | undefined, target: string): string | undefined {
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1];
  }
  // The common request has no query: no string is made for it (this runs on every call).
  const at = target.indexOf('?');
  if (at === -1) return undefined;
  return new URLSearchParams(target.slice(at + 1)).get('key') ?? undefined;
}
