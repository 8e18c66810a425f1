/** The management leg's Markdown table in the report (mgmt-leg.ts measures; report.ts places it). */
import { corePercent, fmt, mib, percent } from './format.js';
import type { LegResult } from './legs.js';

/** The management leg's own table (issue 18), when it ran (ok or failed with its figures). */
export function mgmtLines(legs: LegResult[]): string[] {
  const leg = legs.find((l) => l.scenario === 'mgmt' && l.mgmt !== undefined);
  const m = leg?.mgmt;
  if (leg === undefined || m === undefined) return [];
  const w = m.monitoring;
  const ms = m.list.ms;
  return [
    '',
    `### Management API: ${m.pools} pools × ${m.origins_per_pool} origins, ${m.monitor_type} monitors every ${m.interval_s} s`,
    '',
    '| measure | value |',
    '|---|--:|',
    `| listing all pools (per_page ${m.list.per_page}, ${m.list.pages} page(s), ${fmt(m.list.answer_bytes / 1024, 0)} KiB), ms p50 / p90 / p99 / max over ${m.list.requests} | ${fmt(ms.p50, 1)} / ${fmt(ms.p90, 1)} / ${fmt(ms.p99, 1)} / ${fmt(ms.max, 1)} |`,
    `| monitoring CPU over ${fmt(w.window_s, 1)} s, no traffic (of it kernel) | ${fmt(corePercent(w.cpu_share_of_core), 1)} % of one core (${percent(w.cpu_system_share)}) |`,
    `| checks seen at the fleet | ${fmt(w.checks_per_s, 1)}/s (every origin every ${m.interval_s} s: ${fmt(w.expected_checks_per_s, 1)}/s) |`,
    `| CPU per check (3 HTTP requests) | ${fmt(w.cpu_us_per_check, 1)} µs |`,
    `| checks per origin in the window (fewest) · longest gap between checks (p99 / max) | ${w.min_checks_per_origin} · ${fmt(w.p99_gap_ms / 1000, 2)} / ${fmt(w.max_gap_ms / 1000, 2)} s |`,
    `| Switchyard RSS | ${mib(w.rss_bytes)} MiB |`,
    '',
    `The leg's own Switchyard (embedded SQLite, no networks, no gateway traffic) seeded the pools from its config; ` +
      `the window opened ${fmt(m.steady_after_s, 0)} s after it listened, once every origin had been checked and one ` +
      'more interval had passed. The listings ran after the window, the monitors still running.',
  ];
}
