/**
 * The affinity entries the control process has relayed (read-your-writes and filters, from its workers
 * and, with Redis, from other instances), kept while they count, so that a worker started later — a
 * replacement for one that crashed — gets them in its `init` and keeps a client's origin as the others
 * do. Of two entries for one client (or filter), the later `until` is kept, as in the workers' own maps;
 * at most as many entries as one worker keeps, the least recently relayed dropped first.
 *
 * State: two AffinityMaps (writes by network and client, filters by network and id), in memory.
 */

import { AffinityMap } from '../gateway/upstream/affinity-map.js';
import type { AffinityEntry } from '../gateway/upstream/affinity-share.js';
import { FILTER_AFFINITY_MAX_ENTRIES } from '../gateway/upstream/filter-affinity.js';
import { WRITE_AFFINITY_MAX_ENTRIES } from '../gateway/upstream/write-affinity.js';

export class RelayedAffinity {
  readonly #writes = new AffinityMap<AffinityEntry>(WRITE_AFFINITY_MAX_ENTRIES);
  readonly #filters = new AffinityMap<AffinityEntry>(FILTER_AFFINITY_MAX_ENTRIES);

  record(entry: AffinityEntry): void {
    if (entry.kind === 'write') this.#writes.adopt(`${entry.network}\u0000${entry.client}`, entry);
    else this.#filters.adopt(`${entry.network}\u0000${entry.id}`, entry);
  }

  /** The entries that count at `now` (wall-clock ms), for a new worker's `init`. */
  live(now: number): AffinityEntry[] {
    return [...this.#writes.liveValues(now), ...this.#filters.liveValues(now)];
  }
}
