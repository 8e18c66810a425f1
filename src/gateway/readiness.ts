/**
 * The gateway's readiness (`GET /readyz`, SPEC §11; docs/gateway.md "Health and readiness"): ready when
 * the store answers and every supported network has a pool that can route now. Read on demand, from
 * the same views the router uses, so a load balancer sees what a call would meet:
 * - store: `StoreReadiness` (model/readiness.ts; store/probe.ts bounds the query and reuses an answer
 *   for 1 s, so a flood of probes does not become a flood of queries);
 * - networks: each configured network that is not retired (retired_on reached, by the injected clock;
 *   retired networks are left out) is ready when one of its pools is routable (routing/routable.ts:
 *   exists, enabled, healthy, with an enabled healthy origin of weight > 0); its reason then is null,
 *   else it names why each pool is skipped.
 * Nothing here writes: a worker process can answer from replicas of the control process's views.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';
import type { StoreReadiness } from '../model/readiness.js';
import { whyNotRoutable } from '../routing/routable.js';
import { NetworkLifecycle } from './rpc/lifecycle.js';

export interface PartReadiness {
  readonly ready: boolean;
  /** Why not ready; null when ready. */
  readonly reason: string | null;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly store: PartReadiness;
  readonly networks: Readonly<Record<string, PartReadiness>>;
}

export interface GatewayReadinessOptions {
  networks: Config['networks'];
  directory: PoolDirectory;
  health: HealthView;
  store: StoreReadiness;
  clock: Clock;
}

const READY: PartReadiness = { ready: true, reason: null };

export class GatewayReadiness {
  readonly #options: GatewayReadinessOptions;
  #networks: ReadonlyArray<{ name: string; pools: readonly string[]; lifecycle: NetworkLifecycle }> = [];

  constructor(options: GatewayReadinessOptions) {
    this.#options = options;
    this.reconfigure(options.networks);
  }

  /** The networks to report on (at start, and after a config reload). */
  reconfigure(networks: Config['networks']): void {
    this.#networks = Object.entries(networks).map(([name, network]) => ({
      name,
      pools: network.pools,
      lifecycle: new NetworkLifecycle(name, network, this.#options.clock),
    }));
  }

  async report(): Promise<ReadinessReport> {
    let storeReady: boolean;
    try {
      storeReady = await this.#options.store.storeReady();
    } catch {
      storeReady = false;
    }
    const networks: Record<string, PartReadiness> = {};
    let ready = storeReady;
    for (const network of this.#networks) {
      if (network.lifecycle.retired()) continue;
      const part = this.#network(network.pools);
      networks[network.name] = part;
      ready &&= part.ready;
    }
    return {
      ready,
      store: storeReady ? READY : { ready: false, reason: 'the store did not answer a query' },
      networks,
    };
  }

  #network(poolNames: readonly string[]): PartReadiness {
    if (poolNames.length === 0) return { ready: false, reason: 'no pools configured' };
    const skipped: string[] = [];
    for (const name of poolNames) {
      const why = whyNotRoutable(this.#options.directory.poolByName(name), this.#options.health);
      if (why === undefined) return READY;
      skipped.push(`${name}: ${why}`);
    }
    return { ready: false, reason: `no routable pool (${skipped.join('; ')})` };
  }
}
