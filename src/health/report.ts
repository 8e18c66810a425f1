import { maskAddress } from '../model/origin-address.js';
import type { Origin, Pool } from '../model/pool.js';
import { type OriginHealthRow, stateAddress } from './state-queries.js';

/**
 * Live health as the management API shows it: `GET …/pools/{id}/health` (Cloudflare shape) and the
 * read-only `healthy` of pools and origins. This is the monitors' view, shared by every process through
 * the store — not one process's passive ejections.
 * - An origin is healthy when enabled and its state is not Unhealthy (Unknown, i.e. not yet established
 *   after start, counts as healthy: that is how the gateway routes it). Without a monitor: when enabled.
 * - A pool is healthy when enabled and at least `minimum_origins` of its origins are healthy.
 * - `pop_health` has one checker, `CHECKER` ("switchyard"): every process checks from the same place.
 * - Origins are keyed by their masked address (`maskAddress`: the `address` the pools API shows).
 *   `failure_reason` is "No failures" (Cloudflare's wording) after a passed check, the check's reason
 *   after a failed one, "not checked yet", "origin disabled" or "pool has no monitor" otherwise.
 *   `rtt` is Cloudflare's string form ("12ms").
 */
export const CHECKER = 'switchyard';

export interface OriginHealthReport {
  healthy: boolean;
  failure_reason: string;
  response_code?: number;
  rtt?: string;
}

export interface PoolHealthReport {
  pool_id: string;
  pop_health: Record<string, { healthy: boolean; origins: Array<Record<string, OriginHealthReport>> }>;
}

/** Looks up an origin's stored state; rows measured at an older address do not count. */
export type OriginStateLookup = (poolId: string, originName: string) => OriginHealthRow | undefined;

export function originHealthy(pool: Pool, origin: Origin, lookup: OriginStateLookup): boolean {
  if (!pool.enabled || !origin.enabled) return false;
  if (pool.monitor === null) return true;
  const row = lookup(pool.id, origin.name);
  return row === undefined || row.origin_address !== stateAddress(origin) || row.status !== 'Unhealthy';
}

export function poolHealthy(pool: Pool, lookup: OriginStateLookup): boolean {
  if (!pool.enabled) return false;
  const healthy = pool.origins.filter((origin) => originHealthy(pool, origin, lookup)).length;
  return healthy >= pool.minimum_origins && healthy > 0;
}

export function poolHealthReport(pool: Pool, lookup: OriginStateLookup): PoolHealthReport {
  const origins = pool.origins.map((origin) => ({
    [maskAddress(origin.address)]: originReport(pool, origin, lookup),
  }));
  return { pool_id: pool.id, pop_health: { [CHECKER]: { healthy: poolHealthy(pool, lookup), origins } } };
}

function originReport(pool: Pool, origin: Origin, lookup: OriginStateLookup): OriginHealthReport {
  const healthy = originHealthy(pool, origin, lookup);
  if (!pool.enabled) return { healthy, failure_reason: 'pool disabled' };
  if (!origin.enabled) return { healthy, failure_reason: 'origin disabled' };
  if (pool.monitor === null) return { healthy, failure_reason: 'pool has no monitor' };
  const row = lookup(pool.id, origin.name);
  if (row === undefined || row.origin_address !== stateAddress(origin)) {
    return { healthy, failure_reason: 'not checked yet' };
  }
  return {
    healthy,
    failure_reason: row.last_ok === 1 ? 'No failures' : row.failure_reason,
    ...(row.response_code === null ? {} : { response_code: row.response_code }),
    ...(row.rtt_ms === null ? {} : { rtt: `${row.rtt_ms}ms` }),
  };
}
