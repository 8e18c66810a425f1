/**
 * The routing legs' part of the report (routing-legs.ts measures; report.ts places it): the SPEC §17
 * targets — pool of 64 and network of 20 pools each ≥ 0.9× one origin (req/s), p99 with hedging ≤ 1.5×
 * the p99 with three healthy origins — and a table of the degraded legs with what hedging cost.
 */
import { fmt } from './format.js';
import type { LegResult } from './legs.js';
import type { TargetCheck } from './report.js';

const byId = (legs: LegResult[], id: string): LegResult | undefined =>
  legs.find((leg) => leg.id === id && leg.status === 'ok');

export function routingTargets(legs: LegResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const one = byId(legs, 'pool-size-one');
  for (const [id, name] of [
    ['pool-size-64', 'a pool of 64 origins vs one origin'],
    ['pool-size-20pools', 'a network of 20 pools vs one origin'],
  ] as const) {
    const leg = byId(legs, id);
    const value = leg?.rps && one?.rps ? Math.round((leg.rps / one.rps) * 1000) / 1000 : undefined;
    checks.push({ name, unit: '× req/s', goal: '≥ 0.9', ...(value === undefined ? {} : { value, met: value >= 0.9 }) });
  }
  const hedged = byId(legs, 'degraded-hedge')?.latency_ms?.p99;
  const healthy = byId(legs, 'degraded-healthy')?.latency_ms?.p99;
  const ratio = hedged !== undefined && healthy ? Math.round((hedged / healthy) * 100) / 100 : undefined;
  checks.push({
    name: 'p99 with one origin stalling, hedged, vs three healthy origins',
    unit: '× p99',
    goal: '≤ 1.5',
    ...(ratio === undefined ? {} : { value: ratio, met: ratio <= 1.5 }),
  });
  return checks;
}

/** The degraded legs side by side, with the origin calls each client request cost. */
export function routingLines(legs: LegResult[]): string[] {
  const degraded = legs.filter((leg) => leg.scenario === 'degraded' && leg.status === 'ok');
  if (degraded.length === 0) return [];
  const lines = [
    '',
    '### Routing: one origin of three stalling 5 % of its calls for 300 ms',
    '',
    '| leg | req/s | p50 ms | p99 ms | origin calls per request |',
    '|---|--:|--:|--:|--:|',
  ];
  for (const leg of degraded) {
    lines.push(
      `| ${leg.title} | ${fmt(leg.rps)} | ${fmt(leg.latency_ms?.p50, 3)} | ${fmt(leg.latency_ms?.p99, 3)} | ` +
        `${fmt(leg.routing?.origin_calls_per_request, 3)} |`,
    );
  }
  lines.push(
    '',
    'Origin calls per request count every call the three origins got during the measured load (hedges, ' +
      "retries, the chain tracker's head polls) ÷ the client requests: what is above 1 is what hedging costs.",
  );
  return lines;
}
