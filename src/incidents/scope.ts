/**
 * Whom an incident concerns (its scope, for the `pool_id` filter and per-account views): every pool of
 * the network's tracked origins, the origins it names (`originKeys`, as `pool id/origin name`) each with
 * its pool first.
 */
import type { ChainTracker } from '../chain/tracker.js';
import type { IncidentScope } from './types.js';

export function incidentScope(
  chain: Pick<ChainTracker, 'trackedOrigins'>,
  network: string,
  originKeys: readonly string[],
): IncidentScope {
  const scope: IncidentScope = [];
  const pools = new Set<string>();
  const tracked = chain.trackedOrigins(network);
  for (const entry of tracked) {
    if (originKeys.includes(`${entry.pool.id}/${entry.origin.name}`)) {
      scope.push({ account_id: entry.pool.account_id, pool_id: entry.pool.id, origin: entry.origin.name });
      pools.add(entry.pool.id);
    }
  }
  for (const entry of tracked) {
    if (pools.has(entry.pool.id)) continue;
    pools.add(entry.pool.id);
    scope.push({ account_id: entry.pool.account_id, pool_id: entry.pool.id });
  }
  return scope;
}
