import { type MonitorInput, type MonitorSettings, withMonitorDefaults } from '../model/monitor-schema.js';
import type { Store } from '../store/database.js';
import { getMonitor } from './monitor-queries.js';

/**
 * Where the checker finds a pool's monitor settings. The store-backed source reads the `monitors` row at
 * the start of each round, so an API change to a monitor applies from the next round without restart.
 */
export interface MonitorSource {
  monitor(accountId: string, monitorId: string): Promise<MonitorSettings | undefined>;
}

export function storeMonitorSource(store: Store): MonitorSource {
  return {
    monitor: (accountId, monitorId) => getMonitor(store.db, accountId, monitorId),
  };
}

/** Fixed monitors by id (tests, embedders). */
export function staticMonitorSource(monitors: Record<string, MonitorInput>): MonitorSource {
  return {
    async monitor(_accountId, monitorId) {
      const input = monitors[monitorId];
      return input === undefined ? undefined : withMonitorDefaults(input);
    },
  };
}
