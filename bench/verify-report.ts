/**
 * The verify legs' part of the report (verify-leg.ts measures; report.ts places it): `eth_getBalance` and
 * `eth_call` at `latest` with `verify: proofs` beside `verify: off` — req/s, p50, p99 and the origin calls
 * each client request cost (SPEC §18 "Cost").
 */
import { fmt } from './format.js';
import type { LegResult } from './legs.js';

export function verifyLines(legs: LegResult[]): string[] {
  const measured = legs.filter((leg) => leg.scenario === 'verify' && leg.status === 'ok');
  if (measured.length === 0) return [];
  const lines = [
    '',
    '### Verified answers: verify: proofs beside off',
    '',
    '| leg | req/s | × off | p50 ms | p99 ms | origin calls per request |',
    '|---|--:|--:|--:|--:|--:|',
  ];
  for (const leg of measured) {
    const off = measured.find((other) => other.id === leg.id.replace(/-proofs$/, '-off'));
    const ratio = leg.rps && off?.rps ? Math.round((leg.rps / off.rps) * 1000) / 1000 : undefined;
    lines.push(
      `| ${leg.title} | ${fmt(leg.rps)} | ${fmt(ratio, 3)} | ${fmt(leg.latency_ms?.p50, 3)} | ` +
        `${fmt(leg.latency_ms?.p99, 3)} | ${fmt(leg.verify?.origin_calls_per_request, 3)} |`,
    );
  }
  lines.push(
    '',
    'Origin calls per request: every call the two origins got during the measured load ÷ the client ' +
      'requests. With `off` it is 1; with `proofs` it is what one verified call costs (docs/verification.md).',
  );
  return lines;
}
