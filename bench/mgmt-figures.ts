/** What the management leg (mgmt-leg.ts) reports, kept in `LegResult.mgmt` (legs.ts). */
import type { Spread } from './stats.js';

export interface MgmtFigures {
  pools: number;
  origins_per_pool: number;
  origins: number;
  /**
   * Always jsonrpc: it probes the origin's own address and path, so the fleet tells 10,000 origins on 4
   * ports apart by path. An `http` monitor GETs the monitor's `path` on the origin's host and port, which
   * would make the origins of one port indistinguishable (and "every origin checked" unprovable).
   */
  monitor_type: 'jsonrpc';
  interval_s: number;
  retries: number;
  /** Seconds from Switchyard's start (listening) until the monitoring window opened. */
  steady_after_s: number;
  list: { requests: number; per_page: number; pages: number; answer_bytes: number; ms: Spread };
  monitoring: {
    window_s: number;
    /** Switchyard's CPU (user + system) over the window ÷ the window: 0.25 = a quarter of one core. */
    cpu_share_of_core: number;
    cpu_system_share?: number;
    cpu_us_per_check: number;
    checks: number;
    checks_per_s: number;
    /** origins ÷ interval: what "every origin every interval" means. */
    expected_checks_per_s: number;
    min_checks_per_origin: number;
    /** Longest gap between two checks of one origin (or since its last one, at the window's end). */
    max_gap_ms: number;
    p99_gap_ms: number;
    rss_bytes: number;
  };
}
