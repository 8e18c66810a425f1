/**
 * Origin selection for one request (SPEC §4): the network's pools in their configured order; a pool
 * counts when it exists, is enabled and the HealthView calls it healthy; inside it, the enabled origins
 * with weight > 0 that the HealthView calls healthy, ordered by the pool's steering policy:
 *   random (default) — weighted random order (weight 0..1; 0 = never chosen);
 *   least_outstanding_requests / least_connections — fewest requests in flight per unit of weight first,
 *     ties broken at random;
 *   hash — session affinity (Cloudflare's "hash"): each client (gateway API key, else remote address)
 *     gets its own fixed order of the pool's origins (weighted rendezvous hashing of client and origin
 *     name), so it keeps its origin while that origin is healthy, moves to its next one when it is not,
 *     and comes back when it recovers; adding or removing an origin moves only the clients it concerns.
 * The plan lists every candidate: the first pool's origins, then the next pool's (failover), with
 * demoted origins (a failed connect a moment ago: demotion.ts) moved to the end. An empty plan is NO_HEALTHY_ORIGIN (503), whose details
 * say why each pool was skipped (names only; addresses may hold keys).
 */
import { SwitchyardError } from '../errors/base.js';
import type { HealthView } from '../model/health-view.js';
import type { Origin, Pool, PoolDirectory } from '../model/pool.js';
import type { ConnectDemotion } from './demotion.js';
import type { OutstandingRequests } from './outstanding.js';
import { originTakesTraffic, poolTakesTraffic, whyNotRoutable } from './routable.js';

export interface Candidate {
  readonly pool: Pool;
  readonly origin: Origin;
}

export interface RouterDeps {
  directory: PoolDirectory;
  health: HealthView;
  /** Origins demoted after a failed connect (feedback.ts owns it): tried after every other candidate. */
  demotion: ConnectDemotion;
  outstanding: OutstandingRequests;
  /** [0, 1); injectable for deterministic tests. */
  random?: () => number;
}

export class OriginRouter {
  readonly #deps: RouterDeps;
  readonly #random: () => number;

  constructor(deps: RouterDeps) {
    this.#deps = deps;
    this.#random = deps.random ?? Math.random;
  }

  /**
   * Every origin worth trying for a network with these pools, best first. `client` keys `hash` steering
   * (absent: one shared order). Throws NO_HEALTHY_ORIGIN.
   */
  plan(network: string, poolNames: readonly string[], client = ''): Candidate[] {
    const { directory, health, demotion } = this.#deps;
    const preferred: Candidate[] = [];
    let demoted: Candidate[] | undefined;
    for (const name of poolNames) {
      const pool = directory.poolByName(name);
      if (!poolTakesTraffic(pool, health)) continue;
      const origins = pool.origins.filter((origin) => originTakesTraffic(pool, origin, health));
      for (const origin of origins.length > 1 ? this.#order(pool, origins, client) : origins) {
        if (!demotion.isDemoted(pool.id, origin.name)) preferred.push({ pool, origin });
        else if (demoted === undefined) demoted = [{ pool, origin }];
        else demoted.push({ pool, origin });
      }
    }
    if (demoted !== undefined) preferred.push(...demoted);
    if (preferred.length === 0) throw this.#noHealthyOrigin(network, poolNames);
    return preferred;
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

  #order(pool: Pool, origins: Origin[], client: string): Origin[] {
    const policy = pool.origin_steering.policy;
    if (policy === 'hash') return affinityOrder(origins, client);
    if (policy === 'least_outstanding_requests' || policy === 'least_connections') {
      const load = new Map(
        origins.map((o) => [o, this.#deps.outstanding.get(pool.id, o.name) / o.weight + this.#random() * 1e-9]),
      );
      return [...origins].sort((a, b) => (load.get(a) as number) - (load.get(b) as number));
    }
    return weightedShuffle(origins, this.#random);
  }
}

/**
 * A client's own order of origins (weighted rendezvous hashing): each origin scores
 * weight / −ln(u), u ∈ (0, 1) drawn from a hash of client and origin name; highest first. The order
 * depends only on the client and each origin's own name and weight.
 */
export function affinityOrder(origins: readonly Origin[], client: string): Origin[] {
  const scored = origins.map((origin) => {
    const u = (fnv1a(`${client}\u0000${origin.name}`) + 0.5) / 4_294_967_296;
    return { origin, score: origin.weight / -Math.log(u) };
  });
  scored.sort((a, b) => b.score - a.score || (a.origin.name < b.origin.name ? -1 : 1));
  return scored.map((entry) => entry.origin);
}

/** FNV-1a over the UTF-16 code units of `text`, then a final avalanche: 32 well-mixed bits. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

/** A random order where each next origin is drawn with probability proportional to its weight. */
export function weightedShuffle(origins: readonly Origin[], random: () => number): Origin[] {
  const left = [...origins];
  const out: Origin[] = [];
  while (left.length > 0) {
    const total = left.reduce((sum, o) => sum + o.weight, 0);
    let r = random() * total;
    let index = left.length - 1;
    for (let i = 0; i < left.length; i += 1) {
      r -= (left[i] as Origin).weight;
      if (r < 0) {
        index = i;
        break;
      }
    }
    out.push(...left.splice(index, 1));
  }
  return out;
}
