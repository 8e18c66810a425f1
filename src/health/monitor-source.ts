import { isSwitchyardError } from '../errors/base.js';
import { type MonitorInput, type MonitorSettings, withMonitorDefaults } from '../model/monitor-schema.js';
import type { Store } from '../store/database.js';
import type { Opener } from '../store/store-secrets.js';
import type { MonitorsTable } from '../store/tables/core.js';
import { getMonitorRow, monitorFromRow } from './monitor-queries.js';

/**
 * Where the checker finds a pool's monitor settings. The store-backed source reads the `monitors` row at
 * the start of each round, so an API change to a monitor applies from the next round without restart.
 * It decodes a row (JSON and the stored-settings schema) only when its text differs from the last one
 * it decoded for that monitor: with 1000 pools every 10 s that decoding ran 100 times a second for the
 * same few rows. Callers must not modify the settings they get (they are shared between rounds).
 * A row whose secrets are sealed with a key this process does not hold (`secrets rotate` elsewhere,
 * store/store-secrets.ts) keeps the settings last decoded for that monitor, as routing keeps its last
 * snapshot of pools; with none decoded yet the error goes to the round, which logs it.
 */
export interface MonitorSource {
  monitor(accountId: string, monitorId: string): Promise<MonitorSettings | undefined>;
}

export function storeMonitorSource(store: Store, secrets: Opener): MonitorSource {
  const decoded = new Map<string, { row: MonitorsTable; monitor: MonitorSettings }>();
  return {
    async monitor(accountId, monitorId) {
      const row = await getMonitorRow(store.db, accountId, monitorId);
      if (row === undefined) {
        decoded.delete(monitorId);
        return undefined;
      }
      const last = decoded.get(monitorId);
      if (last !== undefined && sameRow(last.row, row)) return last.monitor;
      let monitor: MonitorSettings;
      try {
        monitor = monitorFromRow(row, secrets);
      } catch (err) {
        if (last !== undefined && isSwitchyardError(err) && err.code === 'SECRETS_KEY_STALE') return last.monitor;
        throw err;
      }
      // Bounded by the monitors in use; entries of deleted monitors go on their next (missing) read.
      if (decoded.size >= MAX_DECODED) decoded.clear();
      decoded.set(monitorId, { row, monitor });
      return monitor;
    },
  };
}

const MAX_DECODED = 100_000;

/** `given`, else the store's source, which needs `secrets` to open monitors' sealed secret headers. */
export function monitorSourceOf(
  store: Store,
  secrets: Opener | undefined,
  given: MonitorSource | undefined,
): MonitorSource {
  if (given !== undefined) return given;
  if (secrets === undefined) throw new TypeError('HealthMonitor: `secrets` is needed to read monitors from the store');
  return storeMonitorSource(store, secrets);
}

function sameRow(a: MonitorsTable, b: MonitorsTable): boolean {
  return (
    a.settings === b.settings &&
    a.account_id === b.account_id &&
    a.modified_on === b.modified_on &&
    a.created_on === b.created_on
  );
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
