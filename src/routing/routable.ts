/**
 * Whether a pool can take a network's calls now — the router's rule (router.ts), named once so the
 * router's NO_HEALTHY_ORIGIN details and the gateway's readiness (`GET /readyz`) say the same thing:
 * the pool exists, is enabled, the HealthView calls it healthy, and it has an enabled origin with
 * weight > 0 that the HealthView calls healthy. Connect demotion (demotion.ts) only reorders origins, so
 * it does not make a pool unroutable. `poolTakesTraffic` and `originTakesTraffic` are that rule in
 * parts, for the router's loops.
 */
import type { HealthView } from '../model/health-view.js';
import type { Origin, Pool } from '../model/pool.js';

/** The pool exists, is enabled, and the HealthView calls it healthy. */
export function poolTakesTraffic(pool: Pool | undefined, health: HealthView): pool is Pool {
  return pool?.enabled === true && health.poolHealthy(pool.id);
}

/** The origin of `pool` is enabled, has weight > 0, and the HealthView calls it healthy. */
export function originTakesTraffic(pool: Pool, origin: Origin, health: HealthView): boolean {
  return origin.enabled && origin.weight > 0 && health.originHealthy(pool.id, origin.name);
}

/** Why `pool` cannot route (a short phrase), or undefined when it can. */
export function whyNotRoutable(pool: Pool | undefined, health: HealthView): string | undefined {
  if (pool === undefined) return 'pool does not exist';
  if (!pool.enabled) return 'pool is disabled';
  if (!health.poolHealthy(pool.id)) return 'pool is unhealthy';
  if (pool.origins.some((origin) => originTakesTraffic(pool, origin, health))) return undefined;
  return 'no enabled, healthy origin with weight > 0';
}
