/**
 * A pool as the config file declares it, in the store's terms: its inline `monitor:` with every default
 * filled in, described as coming from the config unless the file describes it. Seeding (seed.ts), the
 * diff (diff.ts) and `apply` (apply.ts) all read a declared pool through here, so they agree on what
 * "the file's pool" is.
 */
import type { PoolConfig } from '../config/schema.js';
import { type MonitorSettings, withMonitorDefaults } from '../model/monitor-schema.js';
import type { PoolFields } from '../model/pool.js';

/**
 * What a config file says of a pool besides its name, origins and monitor: the diff compares these and
 * apply writes them; the rest of a stored pool (check_regions, latitude, …) is the store's.
 */
export const DECLARED_FIELDS = [
  'description',
  'enabled',
  'minimum_origins',
  'notification_email',
  'notification_filter',
  'origin_steering',
] as const satisfies readonly (keyof PoolFields)[];

/** The monitor settings the file's inline `monitor:` stands for; undefined when the pool has none. */
export function declaredMonitor(pool: PoolConfig): MonitorSettings | undefined {
  if (pool.monitor === undefined) return undefined;
  return withMonitorDefaults({ description: `monitor of pool ${pool.name} (from the config)`, ...pool.monitor });
}
