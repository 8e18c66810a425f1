/**
 * The chain tracker's Prometheus metrics (the API listener's `/metrics`), computed at scrape time from
 * the tracker's state. Labels: `network` (a configured network), `pool` and `origin` (names of the
 * routing account's pools and their origins, as in the config — never addresses, which may carry keys).
 *
 *   switchyard_chain_head{network}                         network head (highest head of usable origins)
 *   switchyard_chain_finalized{network}                    finalized block last fetched (networks in use)
 *   switchyard_chain_origin_head{network,pool,origin}      each tracked origin's head
 *   switchyard_chain_origin_lag_blocks{network,pool,origin} network head − origin head (0 when ahead)
 *   switchyard_chain_reorgs_total{network}                 reorgs of the canonical chain
 *   switchyard_chain_head_refused_total{network,origin}    head claims refused (SPEC §20): each refused
 *                                                          header once, each answer number above the ceiling
 */
import type { MetricsRegistry } from '../metrics/registry.js';
import type { ChainTracker } from './tracker.js';

/** What the tracker counts as it happens. */
export interface ChainCounts {
  reorg(network: string): void;
  refused(network: string, origin: string): void;
}

/** Registers the metrics; returns what counts reorgs and refused head claims. */
export function chainMetrics(registry: MetricsRegistry, tracker: ChainTracker): ChainCounts {
  registry.gauge('switchyard_chain_head', 'Network head: the highest head among usable origins', ['network'], () =>
    tracker.networks().flatMap((network) => {
      const head = tracker.networkHead(network);
      return head === undefined ? [] : [{ labels: { network }, value: head }];
    }),
  );
  registry.gauge('switchyard_chain_finalized', 'Finalized block last fetched for a network in use', ['network'], () =>
    tracker.networks().flatMap((network) => {
      const block = tracker.finalized(network);
      return block === undefined ? [] : [{ labels: { network }, value: block.number }];
    }),
  );
  registry.gauge('switchyard_chain_origin_head', 'Head of each tracked origin', ['network', 'pool', 'origin'], () =>
    tracker
      .networks()
      .flatMap((network) =>
        tracker
          .trackedOrigins(network)
          .flatMap(({ pool, origin, state }) =>
            state.head === undefined
              ? []
              : [{ labels: { network, pool: pool.name, origin: origin.name }, value: state.head }],
          ),
      ),
  );
  registry.gauge(
    'switchyard_chain_origin_lag_blocks',
    'Blocks each tracked origin is behind the network head',
    ['network', 'pool', 'origin'],
    () =>
      tracker.networks().flatMap((network) => {
        const head = tracker.networkHead(network);
        if (head === undefined) return [];
        return tracker
          .trackedOrigins(network)
          .flatMap(({ pool, origin, state }) =>
            state.head === undefined
              ? []
              : [{ labels: { network, pool: pool.name, origin: origin.name }, value: Math.max(0, head - state.head) }],
          );
      }),
  );
  const reorgs = registry.counter('switchyard_chain_reorgs_total', 'Reorgs of the canonical chain', ['network']);
  const refused = registry.counter(
    'switchyard_chain_head_refused_total',
    'Head claims refused: neither linked to the chain nor backed by another origin, or beyond the head ceiling',
    ['network', 'origin'],
  );
  return {
    reorg: (network) => reorgs.inc({ network }),
    refused: (network, origin) => refused.inc({ network, origin }),
  };
}
