/**
 * Origin selection for one request (SPEC §4, §17): the network's pools — in their configured order, or
 * with `networks.{name}.steering: dynamic_latency` by their best origin's score (pools without a score
 * first, so they get measured; with the exploration share a random other pool goes first) — of which a
 * pool counts when it exists, is enabled and the HealthView calls it healthy; inside it, the enabled
 * origins with weight > 0 that the HealthView calls healthy, ordered by the pool's steering policy
 * (steering.ts):
 *   random (default) — weighted random order (weight 0..1; 0 = never chosen);
 *   least_outstanding_requests / least_connections — fewest requests in flight per unit of weight first,
 *     ties broken at random;
 *   hash — session affinity (Cloudflare's "hash"): each client (gateway API key, else remote address)
 *     gets its own fixed order of the pool's origins (weighted rendezvous hashing of client and origin
 *     name), so it keeps its origin while that origin is healthy, moves to its next one when it is not,
 *     and comes back when it recovers; adding or removing an origin moves only the clients it concerns;
 *   dynamic_latency — by score (scores/score-book.ts: p90 × (1 + 4 × error ratio + 4 × throttle ratio)),
 *     origins without a score first; a share `exploration` (gateway.steering_exploration, 5 %) of calls
 *     goes to another origin drawn by weight, so a recovered origin is noticed.
 * Whether a pool or origin takes traffic at all is routable.ts's rule. Origins benched or at their cap
 * (throttling.ts) are skipped; demoted origins (a failed connect a moment ago: demotion.ts) come last.
 *
 * Two ways in. `plan` lists every candidate: the first pool's origins, then the next pool's
 * (failover), demoted origins at the end; an empty plan is NO_HEALTHY_ORIGIN (503, details say why
 * each pool was skipped — names only, addresses may hold keys), or UPSTREAM_THROTTLED (429) when only
 * throttling left nothing. `first` is the hot path: the candidate `plan` would put first, found in
 * O(log n) from the pool's index (pool-index.ts: cumulative weights and a binary search, or the
 * cached score order) with no list built — or undefined when it cannot tell quickly (a pool whose
 * origins are mostly unusable for this call, after FAST_TRIES draws), and then the caller takes `plan`.
 * Both draw from the same distribution, so the picks follow the weights either way.
 */
import { type Clock, systemClock } from '../clock.js';
import { SwitchyardError } from '../errors/base.js';
import type { HealthView } from '../model/health-view.js';
import type { OriginScoreView } from '../model/origin-score.js';
import type { Origin, Pool, PoolDirectory } from '../model/pool.js';
import type { ConnectDemotion } from './demotion.js';
import type { OutstandingRequests } from './outstanding.js';
import { PoolIndex, SCORE_ORDER_MS } from './pool-index.js';
import { originTakesTraffic, poolTakesTraffic, whyNotRoutable } from './routable.js';
import { affinityOrder, explored, weightedShuffle } from './steering.js';
import { type OriginThrottle, throttledError } from './throttling.js';

export { affinityOrder, weightedShuffle } from './steering.js';

export interface Candidate {
  readonly pool: Pool;
  readonly origin: Origin;
}

/** How a network orders its pools (SPEC §17 `networks.{name}.steering`). */
export type NetworkSteering = 'off' | 'dynamic_latency';

/** A call's own condition on its first candidate (e.g. its chain need), checked after health. */
export type Acceptable = (candidate: Candidate) => boolean;

export const DEFAULT_EXPLORATION = 0.05;
/** Draws `first` makes in a pool before it leaves the choice to `plan`. */
const FAST_TRIES = 4;

export interface RouterDeps {
  directory: PoolDirectory;
  health: HealthView;
  /** Origins demoted after a failed connect (feedback.ts owns it): tried after every other candidate. */
  demotion: ConnectDemotion;
  outstanding: OutstandingRequests;
  /** [0, 1); injectable for deterministic tests. */
  random?: () => number;
  /** Origin scores, for dynamic_latency steering (absent: every origin unknown). */
  scores?: OriginScoreView | undefined;
  /** Benched and capped origins (absent: none). */
  throttle?: OriginThrottle | undefined;
  /** Per network: how its pools are ordered (absent: `off`, the configured failover order). */
  networkSteering?: ((network: string) => NetworkSteering) | undefined;
  /** Share of dynamic_latency calls that explore (default 5 %). */
  exploration?: number;
  clock?: Clock;
}

interface NetworkOrder {
  readonly names: readonly string[];
  readonly order: readonly string[];
  readonly at: number;
}

export class OriginRouter {
  readonly #deps: RouterDeps;
  readonly #random: () => number;
  readonly #clock: Clock;
  #exploration: number;
  readonly #indexes = new WeakMap<Pool, PoolIndex>();
  readonly #networkOrders = new Map<string, NetworkOrder>();

  constructor(deps: RouterDeps) {
    this.#deps = deps;
    this.#random = deps.random ?? Math.random;
    this.#clock = deps.clock ?? systemClock;
    this.#exploration = deps.exploration ?? DEFAULT_EXPLORATION;
  }

  /** A reloaded `gateway.steering_exploration` (SPEC §15), for the calls routed from now on. */
  setExploration(share: number): void {
    this.#exploration = share;
  }

  /**
   * The candidate `plan` would list first that `accept` takes, found without building the plan; or
   * undefined when it cannot tell quickly (then `plan`). Never throws.
   */
  first(network: string, poolNames: readonly string[], client = '', accept?: Acceptable): Candidate | undefined {
    const { directory, health } = this.#deps;
    for (const name of this.#poolOrder(network, poolNames)) {
      const pool = directory.poolByName(name);
      if (!poolTakesTraffic(pool, health)) continue;
      const index = this.#index(pool);
      if (index.origins.length === 0) continue;
      return this.#firstIn(pool, index, client, accept);
    }
    return undefined;
  }

  /**
   * Every origin worth trying for a network with these pools, best first. `client` keys `hash` steering
   * (absent: one shared order). Throws NO_HEALTHY_ORIGIN, or UPSTREAM_THROTTLED.
   */
  plan(network: string, poolNames: readonly string[], client = ''): Candidate[] {
    const { directory, health, demotion, throttle } = this.#deps;
    const preferred: Candidate[] = [];
    let demoted: Candidate[] | undefined;
    let throttled: Candidate[] | undefined;
    for (const name of this.#poolOrder(network, poolNames)) {
      const pool = directory.poolByName(name);
      if (!poolTakesTraffic(pool, health)) continue;
      const index = this.#index(pool);
      for (const origin of this.#order(pool, index, client)) {
        if (!originTakesTraffic(pool, origin, health)) continue;
        const candidate: Candidate = { pool, origin };
        if (throttle !== undefined && !throttle.available(pool.id, origin)) {
          if (throttled === undefined) throttled = [candidate];
          else throttled.push(candidate);
        } else if (!demotion.isDemoted(pool.id, origin.name)) preferred.push(candidate);
        else if (demoted === undefined) demoted = [candidate];
        else demoted.push(candidate);
      }
    }
    if (demoted !== undefined) preferred.push(...demoted);
    if (preferred.length > 0) return preferred;
    if (throttled !== undefined && throttle !== undefined) {
      throw throttledError(network, throttled, (c) => throttle.wait(c.pool.id, c.origin));
    }
    throw this.#noHealthyOrigin(network, poolNames);
  }

  /** NO_HEALTHY_ORIGIN, saying why each pool was skipped (built only when no origin is left). */
  #noHealthyOrigin(network: string, poolNames: readonly string[]): SwitchyardError {
    const { directory, health } = this.#deps;
    const skipped: Array<{ pool: string; reason: string }> = [];
    for (const name of poolNames) {
      const reason = whyNotRoutable(directory.poolByName(name), health) ?? 'no enabled, healthy origin with weight > 0';
      skipped.push({ pool: name, reason });
    }
    const why =
      poolNames.length === 0 ? 'it has no pools configured' : skipped.map((s) => `${s.pool}: ${s.reason}`).join('; ');
    return new SwitchyardError(
      'NO_HEALTHY_ORIGIN',
      `No healthy origin for network ${network} (${why}); retry later or check the pools' health.`,
      { details: { network, pools: skipped } },
    );
  }

  /**
   * Throws NO_HEALTHY_ORIGIN (as plan() would) unless some pool of the network has an origin plan()
   * could pick. Cheap (no ordering, no allocation on success): the response cache asks it before every
   * hit, so a network whose pools are all disabled or unhealthy answers 503 even from cache (SPEC §2).
   */
  assertRoutable(network: string, poolNames: readonly string[]): void {
    const { directory, health } = this.#deps;
    for (const name of poolNames) {
      const pool = directory.poolByName(name);
      if (!poolTakesTraffic(pool, health)) continue;
      for (const origin of pool.origins) if (originTakesTraffic(pool, origin, health)) return;
    }
    this.plan(network, poolNames);
  }

  #index(pool: Pool): PoolIndex {
    let index = this.#indexes.get(pool);
    if (index === undefined) {
      index = new PoolIndex(pool);
      this.#indexes.set(pool, index);
    }
    return index;
  }

  /** The candidate when this origin may take the call now (takes traffic, not demoted, not throttled, accepted). */
  #usable(pool: Pool, origin: Origin, accept: Acceptable | undefined): Candidate | undefined {
    const { health, demotion, throttle } = this.#deps;
    if (!originTakesTraffic(pool, origin, health) || demotion.isDemoted(pool.id, origin.name)) return undefined;
    if (throttle !== undefined && !throttle.available(pool.id, origin)) return undefined;
    const candidate: Candidate = { pool, origin };
    return accept === undefined || accept(candidate) ? candidate : undefined;
  }

  /** `first` inside the first routable pool (see the header). */
  #firstIn(pool: Pool, index: PoolIndex, client: string, accept: Acceptable | undefined): Candidate | undefined {
    const policy = pool.origin_steering.policy;
    if (policy === 'hash') {
      for (const origin of affinityOrder(index.origins, client)) {
        const candidate = this.#usable(pool, origin, accept);
        if (candidate !== undefined) return candidate;
      }
      return undefined;
    }
    if (policy === 'least_outstanding_requests' || policy === 'least_connections') {
      let best: Candidate | undefined;
      let bestLoad = Number.POSITIVE_INFINITY;
      for (const origin of index.origins) {
        const candidate = this.#usable(pool, origin, accept);
        if (candidate === undefined) continue;
        const load = this.#deps.outstanding.get(pool.id, origin.name) / origin.weight + this.#random() * 1e-9;
        if (load < bestLoad) {
          best = candidate;
          bestLoad = load;
        }
      }
      return best;
    }
    if (policy === 'dynamic_latency') return this.#firstByScore(pool, index, accept);
    for (let tries = 0; tries < FAST_TRIES; tries += 1) {
      const candidate = this.#usable(pool, index.draw(this.#random), accept);
      if (candidate !== undefined) return candidate;
    }
    return undefined;
  }

  /** dynamic_latency's first: the best usable origin, or for the exploration share another one by weight. */
  #firstByScore(pool: Pool, index: PoolIndex, accept: Acceptable | undefined): Candidate | undefined {
    let best: Candidate | undefined;
    for (const origin of index.byScore(pool.id, this.#deps.scores, this.#clock.monotonic(), this.#random)) {
      best = this.#usable(pool, origin, accept);
      if (best !== undefined) break;
    }
    if (best === undefined || index.origins.length < 2 || this.#random() >= this.#exploration) return best;
    for (let tries = 0; tries < FAST_TRIES; tries += 1) {
      const origin = index.draw(this.#random);
      if (origin === best.origin) continue;
      const candidate = this.#usable(pool, origin, accept);
      if (candidate !== undefined) return candidate;
    }
    return best;
  }

  /** The pool's eligible origins in its steering policy's order (health and the rest are checked after). */
  #order(pool: Pool, index: PoolIndex, client: string): readonly Origin[] {
    const origins = index.origins;
    if (origins.length < 2) return origins;
    const policy = pool.origin_steering.policy;
    if (policy === 'hash') return affinityOrder(origins, client);
    if (policy === 'least_outstanding_requests' || policy === 'least_connections') {
      const load = new Map(
        origins.map((o) => [o, this.#deps.outstanding.get(pool.id, o.name) / o.weight + this.#random() * 1e-9]),
      );
      return [...origins].sort((a, b) => (load.get(a) as number) - (load.get(b) as number));
    }
    if (policy === 'dynamic_latency') {
      const order = index.byScore(pool.id, this.#deps.scores, this.#clock.monotonic(), this.#random);
      return explored(order, this.#random() < this.#exploration, this.#random);
    }
    return weightedShuffle(origins, this.#random);
  }

  /** The network's pool names in the order its steering gives (see the header). */
  #poolOrder(network: string, poolNames: readonly string[]): readonly string[] {
    if (poolNames.length < 2 || this.#deps.networkSteering?.(network) !== 'dynamic_latency') return poolNames;
    const now = this.#clock.monotonic();
    let cached = this.#networkOrders.get(network);
    if (cached === undefined || cached.names !== poolNames || now - cached.at >= SCORE_ORDER_MS) {
      cached = { names: poolNames, order: this.#poolsByScore(poolNames), at: now };
      this.#networkOrders.set(network, cached);
    }
    if (this.#random() >= this.#exploration) return cached.order;
    const order = cached.order;
    const pick = 1 + Math.floor(this.#random() * (order.length - 1));
    return [order[pick] as string, ...order.filter((_, i) => i !== pick)];
  }

  /** Pools by their best origin's score, pools without one first (in configured order). */
  #poolsByScore(poolNames: readonly string[]): string[] {
    const ranked = poolNames.map((name, position) => {
      const pool = this.#deps.directory.poolByName(name);
      const best = pool === undefined ? undefined : this.#index(pool).bestScore(pool.id, this.#deps.scores);
      return { name, position, best };
    });
    ranked.sort((a, b) => {
      if (a.best === undefined || b.best === undefined) {
        return a.best === b.best ? a.position - b.position : a.best === undefined ? -1 : 1;
      }
      return a.best - b.best || a.position - b.position;
    });
    return ranked.map((entry) => entry.name);
  }
}
