/**
 * Who a gateway call is (SPEC §11), decided the same way for HTTP requests (edge.ts) and WebSocket
 * handshakes (ws/upgrade.ts). A key is presented as `Authorization: Bearer <key>` or `?key=<key>`
 * (api-keys.ts `presentedKey`); then:
 *   - one of the static `gateway.api_keys` → the client is `static:` + the first 32 hex of the key's
 *     SHA-256: an identity per key that is not the secret, so rate-limit buckets (which a shared backend
 *     may store) and per-client maps never hold a key, and it cannot equal a gateway key's id;
 *   - a usable gateway key (GatewayKeyTable, looked up by the value's SHA-256) → the client is the
 *     key's id; a key with a `networks` list used on another network is 403 / -32003
 *     KEY_NETWORK_FORBIDDEN;
 *   - anything else (unknown, disabled, deleted, rolled away) → 401 / -32003 GATEWAY_UNAUTHORIZED, even
 *     when keys are optional: a client that presents a key expects it to count.
 * Without a key: 401 when `gateway.api_keys` is set or `gateway.require_key` is true; otherwise the
 * call is anonymous (undefined: the caller uses the remote address). Messages never echo the key.
 * A config reload replaces the static keys and `require_key` (`reconfigure`) for the next call.
 */
import { SwitchyardError } from '../../errors/base.js';
import { type GatewayKeyTable, keyDigest } from '../../model/gateway-keys.js';
import { type ApiKeys, presentedKey } from './api-keys.js';

export interface GatewayAuthOptions {
  /** `gateway.api_keys`, when configured. */
  staticKeys: ApiKeys | undefined;
  /** Gateway keys as resources; none: only static keys. */
  table: GatewayKeyTable | undefined;
  /** `gateway.require_key`. */
  requireKey: boolean;
}

export class GatewayAuth {
  #options: GatewayAuthOptions;
  #required: boolean;

  constructor(options: GatewayAuthOptions) {
    this.#options = options;
    this.#required = options.requireKey || options.staticKeys !== undefined;
  }

  /** Reloaded `gateway.api_keys` and `gateway.require_key`. */
  reconfigure(settings: Pick<GatewayAuthOptions, 'staticKeys' | 'requireKey'>): void {
    this.#options = { ...this.#options, ...settings };
    this.#required = settings.requireKey || settings.staticKeys !== undefined;
  }

  /**
   * The client identity a call to `network` authenticates as: a static key, a gateway key's id, or
   * undefined (anonymous). Throws GATEWAY_UNAUTHORIZED (401) or KEY_NETWORK_FORBIDDEN (403).
   */
  authenticate(authorization: string | undefined, target: string, network: string): string | undefined {
    const presented = presentedKey(authorization, target);
    if (presented === undefined) {
      if (!this.#required) return undefined;
      throw new SwitchyardError(
        'GATEWAY_UNAUTHORIZED',
        'This gateway requires an API key: send Authorization: Bearer <key> or append ?key=<key> to the URL.',
      );
    }
    const digest = keyDigest(presented);
    if (this.#options.staticKeys?.matches(digest)) return `static:${digest.slice(0, 32)}`;
    const key = this.#options.table?.lookup(digest);
    if (key === undefined) {
      throw new SwitchyardError(
        'GATEWAY_UNAUTHORIZED',
        'Unknown, disabled or revoked API key; check the key you were given.',
      );
    }
    if (key.networks !== null && !key.networks.includes(network)) {
      throw new SwitchyardError(
        'KEY_NETWORK_FORBIDDEN',
        `This key may not call network ${JSON.stringify(network)}; it is limited to ${key.networks.length === 0 ? 'no network' : key.networks.map((n) => JSON.stringify(n)).join(', ')}.`,
        { details: { network } },
      );
    }
    return key.id;
  }
}
