/**
 * Method policy of one network (SPEC §2). In order:
 *   1. the network's `deny_methods` (exact name or "namespace_*") → refused (-32601);
 *   2. the network's `allow_methods` → allowed, even for refused namespaces or unknown methods;
 *   3. eth_subscribe / eth_unsubscribe → refused: they need WebSocket, the gateway speaks HTTP;
 *   4. a standard execution-API method (methods.ts) → allowed;
 *   5. admin_ debug_ personal_ miner_ txpool_ engine_ → refused;
 *   6. anything else → unknown method (-32601).
 */
import { SwitchyardError } from '../../errors/base.js';
import { REFUSED_NAMESPACES, STANDARD_METHODS, SUBSCRIPTION_METHODS } from './methods.js';

export class MethodPolicy {
  readonly #network: string;
  readonly #allow: (method: string) => boolean;
  readonly #deny: (method: string) => boolean;
  /**
   * The standard methods and exact allow_methods entries this network forwards, worked out once: the
   * usual call is answered by one set lookup. Other names take the rules in order (and are not added:
   * clients choose them, so the set stays bounded by the configuration).
   */
  readonly #allowed: ReadonlySet<string>;

  constructor(network: string, allow: readonly string[] = [], deny: readonly string[] = []) {
    this.#network = network;
    this.#allow = matcher(allow);
    this.#deny = matcher(deny);
    const names = [...Object.keys(STANDARD_METHODS), ...allow.filter((pattern) => !pattern.endsWith('*'))];
    this.#allowed = new Set(names.filter((name) => this.#refusal(name) === undefined));
  }

  /** The refusal for `method`, or undefined when it may be forwarded. */
  check(method: string): SwitchyardError | undefined {
    return this.#allowed.has(method) ? undefined : this.#refusal(method);
  }

  /** The refusal of the network's `deny_methods` (rule 1) alone: for methods a connection answers itself. */
  denied(method: string): SwitchyardError | undefined {
    return this.#deny(method) ? this.#refusal(method) : undefined;
  }

  #refusal(method: string): SwitchyardError | undefined {
    const net = this.#network;
    if (this.#deny(method)) {
      return new SwitchyardError('RPC_METHOD_NOT_ALLOWED', `Method ${method} is disabled on network ${net}.`, {
        details: { method },
      });
    }
    if (this.#allow(method)) return undefined;
    if ((SUBSCRIPTION_METHODS as readonly string[]).includes(method)) {
      return new SwitchyardError(
        'RPC_METHOD_NOT_ALLOWED',
        `Method ${method} needs a WebSocket connection; this gateway serves HTTP. Poll with eth_newFilter + eth_getFilterChanges or eth_getLogs instead.`,
        { details: { method } },
      );
    }
    if (Object.hasOwn(STANDARD_METHODS, method)) return undefined;
    const namespace = REFUSED_NAMESPACES.find((prefix) => method.startsWith(prefix));
    if (namespace !== undefined) {
      return new SwitchyardError(
        'RPC_METHOD_NOT_ALLOWED',
        `Method ${method} is not allowed: the ${namespace} namespace is refused on network ${net} unless networks.${net}.allow_methods lists it.`,
        { details: { method } },
      );
    }
    return new SwitchyardError(
      'RPC_METHOD_NOT_FOUND',
      `Method ${method} does not exist or is not supported; the gateway serves the standard Ethereum execution API (eth_*, net_*, web3_*).`,
      { details: { method } },
    );
  }
}

function matcher(patterns: readonly string[]): (method: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith('*')));
  const prefixes = patterns.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  return (method) => exact.has(method) || prefixes.some((prefix) => method.startsWith(prefix));
}
