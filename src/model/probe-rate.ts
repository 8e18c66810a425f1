/**
 * The probe budget's one formula (SPEC §8): a pool's monitor makes origins × (retries + 1) ÷ interval
 * requests per second at most — counted as the health engine probes: only an enabled pool with a monitor,
 * only its enabled origins; `interval` in seconds. `retries + 1` is the worst case (a check retries only
 * after a transport failure), and a check counts once whatever the monitor type (a jsonrpc check is up to
 * three HTTP requests). Used by the API's limits (accounts/limits.ts) and the config check (config/cross-check.ts).
 */
export interface ProbedPool {
  enabled: boolean;
  /** Whether the pool has a monitor (its settings are the second argument). */
  monitored: boolean;
  enabledOrigins: number;
}

export function poolProbeRate(pool: ProbedPool, monitor: { interval: number; retries: number } | undefined): number {
  if (!pool.enabled || !pool.monitored || monitor === undefined || monitor.interval <= 0) return 0;
  return (pool.enabledOrigins * (monitor.retries + 1)) / monitor.interval;
}

/** A rate for messages: at most two decimals ("62.5", "0.17"). */
export function shownRate(rate: number): string {
  return String(Math.round(rate * 100) / 100);
}

/** Rates are sums of fractions: compare with a little slack so 50.000000001 is not "over 50". */
export const RATE_EPSILON = 1e-9;
