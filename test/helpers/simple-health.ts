/**
 * A monitor-less HealthView for routing tests (`serve` routes by the monitor-backed view in
 * src/health/view.ts). A pool without a monitor counts its enabled origins as healthy (SPEC §4), and a
 * pool is healthy while it is enabled and at least `minimum_origins` of its origins are enabled.
 * `reportFailure` is recorded for logs only; trying a failing origin last for a moment is the job of
 * `ConnectDemotion` (src/routing/demotion.ts), which routing consults.
 */
import type { Logger } from '../../src/log.js';
import type { HealthView } from '../../src/model/health-view.js';
import type { PoolDirectory } from '../../src/model/pool.js';

export class SimpleHealthView implements HealthView {
  readonly #directory: PoolDirectory;
  readonly #logger: Logger | undefined;

  constructor(directory: PoolDirectory, logger?: Logger) {
    this.#directory = directory;
    this.#logger = logger;
  }

  originHealthy(_poolId: string, _originName: string): boolean {
    return true;
  }

  poolHealthy(poolId: string): boolean {
    const pool = this.#directory.poolById(poolId);
    if (pool === undefined || !pool.enabled) return false;
    const enabled = pool.origins.filter((origin) => origin.enabled).length;
    return enabled > 0 && enabled >= pool.minimum_origins;
  }

  reportFailure(poolId: string, originName: string, reason: string): void {
    this.#logger?.debug('origin failure reported', { pool_id: poolId, origin: originName, reason });
  }
}
