/**
 * What the pools API needs to know about live health: the read-only `healthy` of a pool and of each
 * origin, and the Cloudflare-shaped `GET …/pools/{id}/health` report. The health module provides the
 * monitor-backed implementation; `healthSourceFromView` derives one from any HealthView (used until
 * then, and by tests), reporting every origin under the single checker "switchyard".
 */
import type { HealthView, Origin, Pool } from '../balancing/model.js';

export interface OriginHealthReport {
  healthy: boolean;
  failure_reason: string;
  response_code?: number;
  /** Cloudflare's string form, e.g. "12ms". */
  rtt?: string;
}

export interface PoolHealthReport {
  pool_id: string;
  /** checker name → pool health and one `{ "<shown address>": report }` object per origin. */
  pop_health: Record<string, { healthy: boolean; origins: Array<Record<string, OriginHealthReport>> }>;
}

export interface PoolHealthSource {
  poolHealthy(pool: Pool): boolean;
  originHealthy(pool: Pool, origin: Origin): boolean;
  report(pool: Pool): PoolHealthReport;
}

export function healthSourceFromView(view: HealthView, showAddress: (address: string) => string): PoolHealthSource {
  const originHealthy = (pool: Pool, origin: Origin) => view.originHealthy(pool.id, origin.name);
  return {
    poolHealthy: (pool) => view.poolHealthy(pool.id),
    originHealthy,
    report(pool) {
      const origins = pool.origins.map((origin) => {
        const healthy = originHealthy(pool, origin);
        const reason = !origin.enabled ? 'origin disabled' : healthy ? 'No failures' : 'Unhealthy';
        return { [showAddress(origin.address)]: { healthy, failure_reason: reason } };
      });
      return { pool_id: pool.id, pop_health: { switchyard: { healthy: view.poolHealthy(pool.id), origins } } };
    },
  };
}
