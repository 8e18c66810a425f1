/**
 * `switchyard_origin_healthy{network,pool,origin}` (SPEC §16), read at scrape time: 1 when the origin
 * takes traffic as the gateway routes now — enabled, in an enabled pool, healthy by its monitor (or
 * unmonitored) and not taken out by live traffic (the HealthView) — else 0; one sample per origin of
 * each pool a configured network names (pools are the routing account's, by name). Registered by the
 * process that runs the health monitors (the control process with gateway workers), so it is never
 * summed over processes.
 */
import type { MetricsRegistry, Sample } from '../metrics/registry.js';
import type { HealthView } from '../model/health-view.js';
import type { PoolDirectory } from '../model/pool.js';

export function registerOriginHealthy(
  metrics: MetricsRegistry,
  networks: Readonly<Record<string, { readonly pools: readonly string[] }>>,
  directory: PoolDirectory,
  view: Pick<HealthView, 'originHealthy'>,
): void {
  metrics.gauge(
    'switchyard_origin_healthy',
    'Whether each origin of a configured network takes traffic now (1) or not (0)',
    ['network', 'pool', 'origin'],
    () => originHealthySamples(networks, directory, view),
  );
}

function originHealthySamples(
  networks: Readonly<Record<string, { readonly pools: readonly string[] }>>,
  directory: PoolDirectory,
  view: Pick<HealthView, 'originHealthy'>,
): Sample[] {
  const samples: Sample[] = [];
  for (const [network, { pools }] of Object.entries(networks)) {
    for (const name of pools) {
      const pool = directory.poolByName(name);
      if (pool === undefined) continue;
      for (const origin of pool.origins) {
        const healthy = pool.enabled && origin.enabled && view.originHealthy(pool.id, origin.name);
        samples.push({ labels: { network, pool: pool.name, origin: origin.name }, value: healthy ? 1 : 0 });
      }
    }
  }
  return samples;
}
