/**
 * The order in which one call (or one upstream batch) tries origins (the failsafe engine walks it), built
 * from:
 *   1. the router's plan (routing/router.ts: healthy pools in failover or score order, steering — `hash`
 *      steering keyed by the client — throttled origins skipped, demoted origins last);
 *   2. chain-aware order (routing/chain-order.ts) for what the call needs (rpc/call-needs.ts): origins at
 *      the network head for head-relative calls, origins that have the block for pinned ones;
 *   3. read-your-writes (write-affinity.ts): a client's pending-state reads go first to the origin that
 *      took its last transaction — it wins over the head rule;
 *   4. filter affinity (filter-affinity.ts): a filter call goes first to its filter's origin;
 *   5. free connections first (`roomFirst`), only among the leading candidates that meet the call's
 *      need, so a busy head origin never hands a head read to a laggard.
 * How many of them are tried is the engine's (`max_attempts`, per method).
 * Without a chain tracker (embedders, some tests) steps 2 and 3 are skipped.
 *
 * Routing cost does not grow with the pool (SPEC §17): a call with no filter or write home asks the
 * router for its first candidate alone (router.ts `first`, O(log n): one weighted draw that meets the
 * call's need), and when that origin has a free connection the plan starts with it; the rest of the
 * plan — every step above — is built only if the engine asks for a second candidate (the first failed,
 * or a hedge), without the first. Otherwise the whole plan is built at once, as the steps say.
 */
import type { CallNeeds, ChainView } from '../../chain/types.js';
import type { NetworkConfig } from '../../config/schema.js';
import { meetsNeed, orderByChain } from '../../routing/chain-order.js';
import type { Acceptable, Candidate, OriginRouter } from '../../routing/router.js';
import { followsWrites } from '../rpc/call-needs.js';
import type { UpstreamRequest } from '../rpc/forwarder.js';
import type { RpcCall } from '../rpc/request.js';
import type { FilterAffinity, FilterHome } from './filter-affinity.js';
import type { OriginClients } from './origin-clients.js';
import type { WriteAffinity, WriteHome } from './write-affinity.js';

export interface CallPlannerDeps {
  router: OriginRouter;
  clients: OriginClients;
  filters: FilterAffinity;
  chain?: ChainView | undefined;
  writes?: WriteAffinity | undefined;
  /** Per network: `max_head_lag` (default 0). */
  networks?: Readonly<Record<string, Pick<NetworkConfig, 'max_head_lag'>>> | undefined;
}

/** The whole plan: the candidates in order, and every candidate the router offered, chain-ordered. */
interface FullPlan {
  readonly plan: readonly Candidate[];
  readonly all: readonly Candidate[];
}

/** A call's plan as the engine walks it: one candidate at a time. */
export interface PlanCursor {
  /** The next candidate, or undefined when none is left. */
  next(): Candidate | undefined;
  /** Whether `next` would give one more. */
  hasMore(): boolean;
  /** Puts `candidate` next (the lagging-origin retry); it is not given again later. */
  putNext(candidate: Candidate): void;
  /** Every candidate the router offered, chain-ordered (where the lagging-origin retry looks). */
  all(): readonly Candidate[];
}

export class CallPlanner {
  readonly #deps: CallPlannerDeps;

  constructor(deps: CallPlannerDeps) {
    this.#deps = deps;
  }

  /** The plan of one call with these needs. Throws NO_HEALTHY_ORIGIN or UPSTREAM_THROTTLED (router.ts). */
  forCall(request: UpstreamRequest, needs: CallNeeds): PlanCursor {
    const { network, pools, call, client } = request;
    const filterHome = this.#deps.filters.homeOf(network, call);
    const writeHome = this.#writeHome(network, call, client);
    const full = () => this.#full(network, pools, needs, client, filterHome, writeHome);
    if (filterHome === undefined && writeHome === undefined) {
      const first = this.#first(network, pools, needs, client);
      if (first !== undefined) return new LazyPlan(first, full);
    }
    return new LazyPlan(undefined, full);
  }

  /** The plan of an upstream batch whose calls need, together, `needs`. */
  forBatch(network: string, pools: readonly string[], needs: CallNeeds): PlanCursor {
    const full = () => this.#full(network, pools, needs, undefined, undefined, undefined);
    return new LazyPlan(this.#first(network, pools, needs, undefined), full);
  }

  /** The router's first candidate for these needs, when it has a free connection (see the header). */
  #first(network: string, pools: readonly string[], needs: CallNeeds, client: string | undefined) {
    const { chain, router } = this.#deps;
    const accept: Acceptable | undefined =
      chain === undefined || needs.kind === 'none' || needs.kind === 'hash'
        ? undefined
        : (candidate) => meetsNeed(candidate, needs, chain, network, this.#headLag(network));
    const first = router.first(network, pools, client, accept);
    return first !== undefined && this.#hasRoom(first) ? first : undefined;
  }

  /** The whole plan (steps 1–5). Throws NO_HEALTHY_ORIGIN or UPSTREAM_THROTTLED. */
  #full(
    network: string,
    pools: readonly string[],
    needs: CallNeeds,
    client: string | undefined,
    filterHome: FilterHome | undefined,
    writeHome: WriteHome | undefined,
  ): FullPlan {
    const { router, chain } = this.#deps;
    const planned = router.plan(network, pools, client);
    const ordered =
      chain === undefined
        ? { plan: planned, eligible: planned.length }
        : orderByChain(planned, needs, chain, network, this.#headLag(network));
    const all = ordered.plan;
    if (filterHome !== undefined) {
      const plan = [...all];
      const index = plan.findIndex((c) => c.pool.name === filterHome.pool && c.origin.name === filterHome.origin);
      if (index > 0) plan.unshift(...plan.splice(index, 1));
      return { plan, all };
    }
    if (writeHome !== undefined) {
      const index = all.findIndex((c) => c.pool.id === writeHome.poolId && c.origin.name === writeHome.origin);
      if (index > 0) {
        const plan = [...all];
        plan.unshift(...plan.splice(index, 1));
        return { plan, all };
      }
    }
    return { plan: this.#roomFirst(all, ordered.eligible), all };
  }

  #headLag(network: string): number {
    return this.#deps.networks?.[network]?.max_head_lag ?? 0;
  }

  /** The origin that took the client's last transaction, for a read that follows writes. */
  #writeHome(network: string, call: RpcCall, client: string | undefined): WriteHome | undefined {
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

/** A plan of exactly these candidates, in this order (a send to every origin, a check on one origin). */
export function fixedPlan(candidates: readonly Candidate[]): PlanCursor {
  return new LazyPlan(undefined, () => ({ plan: candidates, all: candidates }));
}

/**
 * A plan given one candidate at a time: `first` (the router's fast pick) and then, only if asked, the
 * whole plan without it; or, without `first`, the whole plan from the start (built at once, so that
 * NO_HEALTHY_ORIGIN is thrown to the caller). After `first`, a whole plan that cannot be built (every
 * other origin unhealthy or throttled now) just has nothing more.
 */
class LazyPlan implements PlanCursor {
  readonly #first: Candidate | undefined;
  readonly #build: () => FullPlan;
  #full: FullPlan | undefined;
  #queue: Candidate[] | undefined;
  #given = 0;
  #at = 0;

  constructor(first: Candidate | undefined, build: () => FullPlan) {
    this.#first = first;
    this.#build = build;
    if (first === undefined) this.#rest();
  }

  next(): Candidate | undefined {
    if (this.#given === 0 && this.#first !== undefined) {
      this.#given = 1;
      return this.#first;
    }
    const queue = this.#rest();
    const candidate = queue[this.#at];
    if (candidate !== undefined) this.#at += 1;
    return candidate;
  }

  hasMore(): boolean {
    if (this.#given === 0 && this.#first !== undefined) return true;
    return this.#at < this.#rest().length;
  }

  putNext(candidate: Candidate): void {
    const queue = this.#rest();
    const later = queue.findIndex((c, i) => i >= this.#at && same(c, candidate));
    if (later >= 0) queue.splice(later, 1);
    queue.splice(this.#at, 0, candidate);
  }

  all(): readonly Candidate[] {
    this.#rest();
    return (this.#full as FullPlan).all;
  }

  /** The candidates after `first`, built on first use. */
  #rest(): Candidate[] {
    if (this.#queue !== undefined) return this.#queue;
    const first = this.#first;
    if (first === undefined) {
      this.#full = this.#build();
      this.#queue = [...this.#full.plan];
      return this.#queue;
    }
    try {
      this.#full = this.#build();
      this.#queue = this.#full.plan.filter((c) => !same(c, first));
    } catch {
      this.#full = { plan: [first], all: [first] };
      this.#queue = [];
    }
    return this.#queue;
  }
}

function same(a: Candidate, b: Candidate): boolean {
  return a === b || (a.pool.id === b.pool.id && a.origin.name === b.origin.name);
}
