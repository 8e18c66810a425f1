/**
 * What the pools API needs to know about live health: the read-only `healthy` of a pool and of each
 * origin, and the Cloudflare-shaped `GET …/pools/{id}/health` report. The health module's
 * `HealthMonitor` implements it (monitor-backed, shared by every process through the store).
 */
import type { Origin, Pool } from '../balancing/model.js';

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
