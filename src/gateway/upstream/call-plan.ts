/**
 * The order in which one call (or one upstream batch) tries origins (origin-forwarder.ts), built from:
 *   1. the router's plan (routing/router.ts: healthy pools in failover order, steering — `hash` steering
 *      keyed by the client — demoted origins last);
 *   2. chain-aware order (routing/chain-order.ts) for what the call needs (rpc/call-needs.ts): origins at
 *      the network head for head-relative calls, origins that have the block for pinned ones;
 *   3. read-your-writes (write-affinity.ts): a client's pending-state reads go first to the origin that
 *      took its last transaction — it wins over the head rule;
 *   4. filter affinity (filter-affinity.ts): a filter call goes first to its filter's origin;
 *   5. cut to `gateway.max_attempts`;
 *   6. free connections first (`roomFirst`), only among the leading candidates that meet the call's
 *      need, so a busy head origin never hands a head read to a laggard.
 * Without a chain tracker (embedders, some tests) steps 2 and 3 are skipped.
 */
import type { CallNeeds, ChainView } from '../../chain/types.js';
import type { NetworkConfig } from '../../config/schema.js';
import { orderByChain } from '../../routing/chain-order.js';
import type { Candidate, OriginRouter } from '../../routing/router.js';
import { followsWrites } from '../rpc/call-needs.js';
import type { UpstreamRequest } from '../rpc/forwarder.js';
import type { RpcCall } from '../rpc/request.js';
import type { FilterAffinity } from './filter-affinity.js';
import type { OriginClients } from './origin-clients.js';
import type { WriteAffinity } from './write-affinity.js';

export interface CallPlannerDeps {
  router: OriginRouter;
  clients: OriginClients;
  filters: FilterAffinity;
  maxAttempts: number;
  chain?: ChainView | undefined;
  writes?: WriteAffinity | undefined;
  /** Per network: `max_head_lag` (default 0). */
  networks?: Readonly<Record<string, Pick<NetworkConfig, 'max_head_lag'>>> | undefined;
}

export interface CallPlan {
  /** The candidates to try, in order, at most `maxAttempts`. */
  readonly plan: Candidate[];
  /** Every candidate the router offered, chain-ordered (where a retry on the most advanced origin looks). */
  readonly all: readonly Candidate[];
}

export class CallPlanner {
  readonly #deps: CallPlannerDeps;

  constructor(deps: CallPlannerDeps) {
    this.#deps = deps;
  }

  /** The plan of one call with these needs. Throws NO_HEALTHY_ORIGIN (router.ts). */
  forCall(request: UpstreamRequest, needs: CallNeeds): CallPlan {
    const { router, filters, maxAttempts, chain } = this.#deps;
    const planned = router.plan(request.network, request.pools, request.client);
    const ordered =
      chain === undefined
        ? { plan: planned, eligible: planned.length }
        : orderByChain(planned, needs, chain, request.network, this.#headLag(request.network));
    const all = ordered.plan;
    const filterHome = filters.homeOf(request.network, request.call);
    if (filterHome !== undefined) {
      const plan = [...all];
      const index = plan.findIndex((c) => c.pool.name === filterHome.pool && c.origin.name === filterHome.origin);
      if (index > 0) plan.unshift(...plan.splice(index, 1));
      return { plan: cut(plan, maxAttempts), all };
    }
    const writeHome = this.#writeHome(request.network, request.call, request.client);
    if (writeHome !== undefined) {
      const index = all.findIndex((c) => c.pool.id === writeHome.poolId && c.origin.name === writeHome.origin);
      if (index > 0) {
        const plan = [...all];
        plan.unshift(...plan.splice(index, 1));
        return { plan: cut(plan, maxAttempts), all };
      }
    }
    return { plan: this.#roomFirst(cut(all, maxAttempts), ordered.eligible), all };
  }

  /** The plan of an upstream batch whose calls need, together, `needs`. */
  forBatch(network: string, pools: readonly string[], needs: CallNeeds): Candidate[] {
    const { router, maxAttempts, chain } = this.#deps;
    const planned = router.plan(network, pools);
    const ordered =
      chain === undefined
        ? { plan: planned, eligible: planned.length }
        : orderByChain(planned, needs, chain, network, this.#headLag(network));
    return this.#roomFirst(cut(ordered.plan, maxAttempts), ordered.eligible);
  }

  #headLag(network: string): number {
    return this.#deps.networks?.[network]?.max_head_lag ?? 0;
  }

  #writeHome(network: string, call: RpcCall, client: string | undefined) {
    const writes = this.#deps.writes;
    if (writes === undefined || client === undefined || !followsWrites(call.method, call.params)) return undefined;
    return writes.homeOf(client, network);
  }

  /**
   * `plan` unchanged when its first origin has a free connection (the usual case: one check); else the
   * first `eligible` candidates that have one first, each group in plan order, so a call does not queue
   * behind an origin's busy connections while another planned origin that meets its need has room.
   */
  #roomFirst(plan: Candidate[], eligible: number): Candidate[] {
    const span = Math.min(eligible, plan.length);
    if (span < 2 || this.#hasRoom(plan[0] as Candidate)) return plan;
    const room: Candidate[] = [];
    const full: Candidate[] = [];
    for (let i = 0; i < span; i += 1) {
      const candidate = plan[i] as Candidate;
      (this.#hasRoom(candidate) ? room : full).push(candidate);
    }
    return room.length === 0 ? plan : [...room, ...full, ...plan.slice(span)];
  }

  #hasRoom(candidate: Candidate): boolean {
    try {
      return this.#deps.clients.target(candidate.origin).pool.hasCapacity;
    } catch {
      return true; // an unusable address fails at once, without waiting
    }
  }
}

function cut(plan: Candidate[], maxAttempts: number): Candidate[] {
  return plan.length > maxAttempts ? plan.slice(0, maxAttempts) : plan;
}
