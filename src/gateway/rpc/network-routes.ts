/**
 * The networks the gateway serves, as the RpcHandler needs each one: its pools, lifecycle (lifecycle.ts),
 * method policy (method-policy.ts) and eth_getLogs range limit — made once from the config. Asking for
 * a network that is not configured throws NETWORK_UNKNOWN (404 / -32001), naming the configured paths.
 */
import type { Clock } from '../../clock.js';
import type { NetworkConfig } from '../../config/schema.js';
import { SwitchyardError } from '../../errors/base.js';
import { NetworkLifecycle } from './lifecycle.js';
import { MethodPolicy } from './method-policy.js';

export interface NetworkRoute {
  readonly pools: readonly string[];
  readonly lifecycle: NetworkLifecycle;
  readonly policy: MethodPolicy;
  /** networks.{name}.max_logs_block_range (null: no guard). */
  readonly maxLogsRange: number | null;
}

export class NetworkRoutes {
  readonly #routes = new Map<string, NetworkRoute>();

  constructor(networks: Readonly<Record<string, NetworkConfig>>, clock: Clock) {
    for (const [name, network] of Object.entries(networks)) {
      this.#routes.set(name, {
        pools: network.pools,
        lifecycle: new NetworkLifecycle(name, network, clock),
        policy: new MethodPolicy(name, network.allow_methods, network.deny_methods),
        maxLogsRange: network.max_logs_block_range ?? null,
      });
    }
  }

  /** The network's route, or undefined when it is not configured. */
  find(network: string): NetworkRoute | undefined {
    return this.#routes.get(network);
  }

  /** The network's route, or throws NETWORK_UNKNOWN. */
  get(network: string): NetworkRoute {
    const route = this.#routes.get(network);
    if (route !== undefined) return route;
    const known = [...this.#routes.keys()].map((name) => `/v1/${name}`).join(', ');
    throw new SwitchyardError(
      'NETWORK_UNKNOWN',
      `Unknown network "${network}"; configured networks: ${known || '(none)'}.`,
      {
        details: { network },
      },
    );
  }
}
