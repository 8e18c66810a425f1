/**
 * What the pools API needs to know about live health: the read-only `healthy` of a pool and of each
 * origin, and the Cloudflare-shaped `GET …/pools/{id}/health` report. The report's shape is the health
 * module's (health/report.ts); its `HealthMonitor` implements this interface (monitor-backed, shared by
 * every process through the store), and tests may pass a small fixed one.
 */

import type { PoolHealthReport } from '../health/report.js';
import type { Origin, Pool } from '../model/pool.js';

export interface PoolHealthSource {
  poolHealthy(pool: Pool): boolean;
  originHealthy(pool: Pool, origin: Origin): boolean;
  report(pool: Pool): PoolHealthReport;
}
