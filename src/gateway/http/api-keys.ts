/**
 * Optional API keys (`gateway.api_keys`): when configured, every gateway call must carry one, as
 * `Authorization: Bearer <key>` or as the query parameter `?key=<key>` (for clients that cannot set
 * headers). Keys are compared as SHA-256 digests in constant time and never logged. Without configured
 * keys the gateway is open (seed §5: gateway calls carry no credential).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { SwitchyardError } from '../../errors/base.js';

export class ApiKeys {
  readonly #digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map(digest);
  }

  /**
   * The key a request presents (validated), from its Authorization header or its request-target's
   * `?key=`, or throws GATEWAY_UNAUTHORIZED.
   */
  authenticate(authorization: string | undefined, target: string): string {
    const presented = presentedKey(authorization, target);
    if (presented === undefined) {
      throw new SwitchyardError(
        'GATEWAY_UNAUTHORIZED',
        'This gateway requires an API key: send Authorization: Bearer <key> or append ?key=<key> to the URL.',
      );
    }
    const d = digest(presented);
    let ok = false;
    for (const known of this.#digests) ok = timingSafeEqual(known, d) || ok;
    if (!ok) throw new SwitchyardError('GATEWAY_UNAUTHORIZED', 'Unknown API key; check the key you were given.');
    return presented;
  }
}

function presentedKey(header: string | undefined, target: string): string | undefined {
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1];
  }
  const query = target.split('?')[1];
  if (query === undefined) return undefined;
  return new URLSearchParams(query).get('key') ?? undefined;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
