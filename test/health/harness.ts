/**
 * Builds what a health test needs around real local origins: a fresh SQLite store in a temp dir, a static
 * pool directory, fixed monitors and a HealthMonitor driven by `runOnce()` with a ManualClock (no waiting
 * on intervals). `events()` reads the health_events table in seq order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import { type HealthEventRow, readHealthEvents } from '../../src/health/events.js';
import { HealthMonitor, type HealthMonitorOptions, type NetworkChains } from '../../src/health/monitor.js';
import { staticMonitorSource } from '../../src/health/monitor-source.js';
import type { MonitorInput } from '../../src/model/monitor-schema.js';
import type { Origin, Pool } from '../../src/model/pool.js';
import { OutboundPolicy } from '../../src/outbound/policy.js';
import { StaticPoolDirectory } from '../../src/routing/static-directory.js';
import { openStore, type Store } from '../../src/store/database.js';

export const ACCOUNT = '0123456789abcdef0123456789abcdef';

export function makePool(
  id: string,
  origins: Array<Partial<Origin> & { name: string; address: string }>,
  extra: Partial<Pool> = {},
): Pool {
  return {
    id,
    account_id: ACCOUNT,
    name: id,
    description: '',
    enabled: true,
    minimum_origins: 1,
    monitor: 'm1',
    notification_email: '',
    notification_filter: null,
    origins: origins.map((origin) => ({ enabled: true, weight: 1, header: {}, ...origin })),
    origin_steering: { policy: 'random' },
    check_regions: null,
    created_on: '2026-01-01T00:00:00.000Z',
    modified_on: '2026-01-01T00:00:00.000Z',
    ...extra,
  };
}

export interface Harness {
  store: Store;
  clock: ManualClock;
  directory: StaticPoolDirectory;
  monitor: HealthMonitor;
  events(): Promise<HealthEventRow[]>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  pools: Pool[];
  monitors: Record<string, MonitorInput>;
  networks?: NetworkChains;
  store?: Store;
  clock?: ManualClock;
  extra?: Partial<HealthMonitorOptions>;
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-health-'));
  const store = options.store ?? (await openStore({ data_dir: dir }));
  const clock = options.clock ?? new ManualClock('2026-03-01T00:00:00Z');
  const directory = new StaticPoolDirectory(options.pools);
  const monitor = new HealthMonitor({
    store,
    directory,
    routingAccountId: ACCOUNT,
    networks: options.networks ?? { sepolia: { chain_id: 11_155_111, pools: options.pools.map((p) => p.name) } },
    monitors: staticMonitorSource(options.monitors),
    clock,
    // Confirmation probes run when a test calls confirmEjections(), not on their real-time timers.
    confirmDelayMs: 3_600_000,
    ...options.extra,
    // The routing account is trusted, as the default `outbound.trusted_accounts` says.
    outbound: options.extra?.outbound ?? new OutboundPolicy({ trustedAccounts: [ACCOUNT] }),
  });
  return {
    store,
    clock,
    directory,
    monitor,
    events: () => readHealthEvents(store.db, { afterSeq: 0, limit: 1000 }),
    async close() {
      await monitor.stop();
      if (options.store === undefined) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** "origin a Healthy->Unhealthy (connection refused)" / "pool p Unknown->Unhealthy". */
export function describeEvent(event: HealthEventRow, withReason = false): string {
  const subject = event.event_source === 'origin' ? `origin ${event.origin_name}` : `pool ${event.pool_name}`;
  return `${subject} ${event.previous}->${event.new_health}${withReason ? ` (${event.reason})` : ''}`;
}
