/**
 * `switchyard_origin_score{network,pool,origin}` (SPEC §17): each origin's score — its expected latency
 * in seconds, p90 × (1 + 4 × error ratio + 4 × throttle ratio) — for every configured network, its pools
 * (in the routing account's directory) and their origins that have a score now (an origin without a
 * sample in its window has no series). Read from the book of the process that serves /metrics: with
 * workers, the control process's, which holds every worker's traffic (score-book.ts), so the series is
 * never summed over workers. Pool and origin names are not secrets; addresses never appear. The networks
 * are read at each scrape (`networks()`: the config in force, which a reload replaces).
 */
import type { MetricsRegistry, Sample } from '../../metrics/registry.js';
import type { OriginScoreView } from '../../model/origin-score.js';
import { eachNetworkOrigin, type NetworkPools, type PoolDirectory } from '../../model/pool.js';

export function registerScoreMetric(
  metrics: MetricsRegistry,
  scores: OriginScoreView,
  networks: () => NetworkPools,
  directory: PoolDirectory,
): void {
  metrics.gauge(
    'switchyard_origin_score',
    'Origin score: expected latency in seconds, p90 x (1 + 4 x error ratio + 4 x throttle ratio); lower is better',
    ['network', 'pool', 'origin'],
    () => {
      const samples: Sample[] = [];
      eachNetworkOrigin(networks(), directory, (network, pool, origin) => {
        const score = scores.score(pool.id, origin.name)?.score;
        if (score !== undefined && score !== null) {
          samples.push({ labels: { network, pool: pool.name, origin: origin.name }, value: score });
        }
      });
      return samples;
    },
  );
}
