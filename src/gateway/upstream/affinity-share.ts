/**
 * The port through which the processes serving one gateway (SPEC §11 workers: cluster/worker.ts) tell
 * each other where a client's last transaction went (write-affinity.ts) and which origin holds a filter
 * (filter-affinity.ts), so that a client's next call keeps its origin whichever worker its connection
 * lands on. A process publishes what it records; every entry published (its own included) comes back to
 * its listeners, which adopt it as if recorded here. `until` is wall-clock ms: the processes share one
 * machine's clock. Without a share (one process), each affinity map is this process's own.
 */
export type AffinityEntry =
  | { kind: 'write'; network: string; client: string; poolId: string; origin: string; until: number }
  | { kind: 'filter'; network: string; id: string; pool: string; origin: string; until: number };

export interface AffinityShare {
  /** Tells the other processes (and, back, this one) of an entry just recorded here. */
  publish(entry: AffinityEntry): void;
  /** Calls `listener` with every entry published by any process from now on. */
  subscribe(listener: (entry: AffinityEntry) => void): void;
}
