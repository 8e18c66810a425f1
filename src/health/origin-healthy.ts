/**
 * The origins' health gauges, read at scrape time from the health monitor's state:
 * - `switchyard_health_origins{status}`: monitored origins by their stored state (Healthy, Unhealthy,
 *   Unknown);
 * - `switchyard_origin_healthy{network,pool,origin}` (SPEC §16): 1 when the origin is healthy as the
 *   gateway routes now — enabled, in an enabled pool, healthy by its monitor (or unmonitored) and not
 *   taken out by live traffic (the HealthView) — else 0 (its weight does not matter: a drained origin is
 *   not a down one); one sample per origin of each pool a configured network names (pools are the
 *   routing account's, by name).
 * Registered by the process that runs the health monitors (the control process with gateway workers),
 * so they are never summed over processes.
 */
import type { MetricsRegistry, Sample } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import { eachNetworkOrigin, type NetworkPools, type PoolDirectory } from '../model/pool.js';
import type { LiveState } from './live-state.js';

export interface OriginGaugeSources {
  /** The configured networks, read at each scrape (a config reload replaces them). */
  readonly networks: () => NetworkPools;
  readonly directory: PoolDirectory;
  readonly view: Pick<HealthView, 'originHealthy'>;
  readonly live: Pick<LiveState, 'origins'>;
}

export function registerOriginGauges(metrics: MetricsRegistry, sources: OriginGaugeSources): void {
  const { networks, directory, view, live } = sources;
  metrics.gauge('switchyard_health_origins', 'Monitored origins by current state', ['status'], () => {
    const counts = { Healthy: 0, Unhealthy: 0, Unknown: 0 };
    for (const pool of directory.allPools()) {
      for (const row of live.origins(pool.id).values()) counts[row.status] += 1;
    }
    return Object.entries(counts).map(([status, value]) => ({ labels: { status }, value }));
  });
  metrics.gauge(
    'switchyard_origin_healthy',
    'Whether each origin of a configured network takes traffic now (1) or not (0)',
    ['network', 'pool', 'origin'],
    () => originHealthySamples(networks(), directory, view),
  );
}

function originHealthySamples(
  networks: NetworkPools,
  directory: PoolDirectory,
  view: Pick<HealthView, 'originHealthy'>,
): Sample[] {
  const samples: Sample[] = [];
  eachNetworkOrigin(networks, directory, (network, pool, origin) => {
    const healthy = pool.enabled && origin.enabled && view.originHealthy(pool.id, origin.name);
    samples.push({ labels: { network, pool: pool.name, origin: origin.name }, value: healthy ? 1 : 0 });
  });
  return samples;
}
