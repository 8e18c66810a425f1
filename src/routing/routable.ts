/**
 * Whether a pool can take a network's calls now — the router's rule (router.ts), named once so the
 * router's NO_HEALTHY_ORIGIN details and the gateway's readiness (`GET /readyz`) say the same thing:
 * the pool exists, is enabled, the HealthView calls it healthy, and it has an enabled origin with
 * weight > 0 that the HealthView calls healthy. Passive ejection only reorders origins, so it does not
 * make a pool unroutable.
 */
import type { HealthView } from '../model/health-view.js';
import type { Pool } from '../model/pool.js';

/** Why `pool` cannot route (a short phrase), or undefined when it can. */
export function whyNotRoutable(pool: Pool | undefined, health: HealthView): string | undefined {
  if (pool === undefined) return 'pool does not exist';
  if (!pool.enabled) return 'pool is disabled';
  if (!health.poolHealthy(pool.id)) return 'pool is unhealthy';
  for (const origin of pool.origins) {
    if (origin.enabled && origin.weight > 0 && health.originHealthy(pool.id, origin.name)) return undefined;
  }
  return 'no enabled, healthy origin with weight > 0';
}
