/**
 * Row type of `origin_stats` (migration 007, owned by src/stats/): per origin and UTC minute, the
 * gateway's attempts on it — requests, errors, and a latency histogram in fixed buckets (b0..b13, upper
 * bounds in model/origin-stats.ts). Every process adds its counts with additive upserts, so the row
 * is the sum over workers and instances.
 */
export interface OriginStatsTable {
  pool_id: string;
  origin_name: string;
  /** Unix minute: floor(ms / 60000). */
  minute: number;
  requests: number;
  errors: number;
  b0: number;
  b1: number;
  b2: number;
  b3: number;
  b4: number;
  b5: number;
  b6: number;
  b7: number;
  b8: number;
  b9: number;
  b10: number;
  b11: number;
  b12: number;
  b13: number;
}

export interface StatsTables {
  origin_stats: OriginStatsTable;
}
