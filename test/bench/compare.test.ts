import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { change, compareReports, historyTable, lastFullRuns, median, meets } from '../../bench/compare.js';
import type { LegResult } from '../../bench/legs.js';
import type { BenchReport, TargetCheck } from '../../bench/report.js';

/** The regression guard's formatting (bench/compare.ts) on small hand-made reports. */

function leg(id: string, extra: Partial<LegResult> = {}): LegResult {
  const [scenario, target] = id.split('-') as [LegResult['scenario'], LegResult['target']];
  return {
    id,
    scenario,
    target,
    title: scenario,
    status: 'ok',
    connections: 32,
    request_bytes: 60,
    response_bytes: 46,
    ...extra,
  };
}

function report(
  started: string,
  legs: LegResult[],
  targets: TargetCheck[],
  mode: 'quick' | 'full' = 'full',
): BenchReport {
  return {
    schema: 'switchyard-bench/1',
    started_at: started,
    finished_at: started,
    mode,
    machine: {},
    settings: {},
    notes: [],
    legs,
    targets,
  };
}

const forwarding = (value: number | undefined): TargetCheck => ({
  name: 'forwarding vs nginx proxy',
  unit: '× req/s',
  goal: '≥ 0.6',
  ...(value === undefined ? {} : { value, met: value >= 0.6 }),
});

const lat = (p50: number, p99: number) => ({ p50, p90: p50, p99, mean: p50, max: p99 });

const before = report(
  '2026-11-20T10:00:00.000Z',
  [
    leg('single-switchyard', { rps: 20_000, latency_ms: lat(1, 3), cpu_us_per_request: 40, ratio_to_nginx: 0.5 }),
    leg('batch100-switchyard', { rps: 1_000, latency_ms: lat(25, 45), cpu_us_per_request: 800, ratio_to_nginx: 0.05 }),
    leg('anvil-switchyard', { status: 'skipped', reason: '--no-anvil' }),
  ],
  [forwarding(0.5)],
);
const after = report(
  '2026-11-21T10:00:00.000Z',
  [
    leg('single-switchyard', { rps: 25_000, latency_ms: lat(0.8, 3), cpu_us_per_request: 36, ratio_to_nginx: 0.625 }),
    leg('batch100-switchyard', { rps: 8_000, latency_ms: lat(4, 9), cpu_us_per_request: 120, ratio_to_nginx: 0.4 }),
    leg('cached-switchyard', { rps: 50_000, latency_ms: lat(0.4, 1.5), cpu_us_per_request: 18, ratio_to_nginx: 1.25 }),
  ],
  [forwarding(0.625), { name: 'monitoring CPU', unit: '% of one core', goal: '< 25' }],
);

test('change: signed percentages, nothing when a side is missing or zero', () => {
  assert.equal(change(100, 125), '+25.0 %');
  assert.equal(change(40, 36), '−10.0 %');
  assert.equal(change(3, 3), '±0.0 %');
  assert.equal(change(undefined, 3), '');
  assert.equal(change(0, 3), '');
});

test('compareReports: each leg before → after with its change, targets before → after and met', () => {
  const lines = compareReports(before, after);
  assert.equal(lines[0], 'Before: 2026-11-20T10:00:00.000Z (full); after: 2026-11-21T10:00:00.000Z (full).');
  assert.ok(lines.includes('| leg | req/s | p50 ms | p99 ms | CPU µs/req | × nginx |'), lines.join('\n'));
  assert.ok(
    lines.includes(
      '| single · switchyard | 20,000 → 25,000 (+25.0 %) | 1.000 → 0.800 (−20.0 %) | 3.000 → 3.000 (±0.0 %) | 40.0 → 36.0 (−10.0 %) | 0.50 → 0.63 (+25.0 %) |',
    ),
    lines.join('\n'),
  );
  // A leg of only one run: the other side is "–", no change.
  assert.ok(
    lines.includes('| cached · switchyard | – → 50,000 | – → 0.400 | – → 1.500 | – → 18.0 | – → 1.25 |'),
    lines.join('\n'),
  );
  assert.ok(lines.includes('Not ok in one run or both (left out above where neither has figures): anvil-switchyard.'));
  assert.ok(lines.includes('| forwarding vs nginx proxy | ≥ 0.6 × req/s | 0.5 → 0.625 (+25.0 %) | missed → met |'));
  assert.ok(lines.includes('| monitoring CPU | < 25 % of one core | – | not measured → not measured |'));
  const mixed = compareReports(report('2026-11-20T10:00:00.000Z', [], [], 'quick'), after);
  assert.match(mixed.join('\n'), /different modes/);
});

test('compareReports: the management leg adds its monitoring columns', () => {
  const mgmt = (share: number): LegResult =>
    leg('mgmt-switchyard', {
      rps: 60,
      latency_ms: lat(15, 30),
      mgmt: {
        monitoring: { cpu_share_of_core: share, checks_per_s: 1000 },
      } as unknown as LegResult['mgmt'],
    });
  const lines = compareReports(report('a', [mgmt(0.3)], []), report('b', [mgmt(0.2)], []));
  assert.ok(lines.includes('| leg | req/s | p50 ms | p99 ms | monitoring % of a core | checks/s |'), lines.join('\n'));
  assert.ok(
    lines.some((line) => line.includes('| 30.0 → 20.0 (−33.3 %) | 1,000.0 → 1,000.0 (±0.0 %) |')),
    lines.join('\n'),
  );
});

test('meets: both runs are judged by the newer goal', () => {
  assert.deepEqual(
    [meets('≥ 0.6', 0.6), meets('≥ 0.6', 0.55), meets('≤ 20', 20), meets('< 25', 25), meets('> 1', 1.5)],
    [true, false, true, false, true],
  );
  assert.equal(meets('about 3', 3), undefined);
  // The older run said met against its goal of ≥ 0.5; against the newer ≥ 0.6 its 0.55 is missed.
  const old = report('a', [], [{ ...forwarding(0.55), goal: '≥ 0.5', met: true }]);
  const lines = compareReports(old, report('b', [], [forwarding(0.61)]));
  assert.ok(
    lines.includes('| forwarding vs nginx proxy | ≥ 0.6 × req/s | 0.55 → 0.61 (+10.9 %) | missed → met |'),
    lines.join('\n'),
  );
});

test('median: odd and even counts, gaps ignored', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, undefined, 2, 3]), 2.5);
  assert.equal(median([undefined]), undefined);
});

test('historyTable: a column per run, oldest first, the median, a row per target and per Switchyard leg', () => {
  const third = report('2026-11-22T10:00:00.000Z', [leg('single-switchyard', { rps: 30_000 })], [forwarding(0.7)]);
  const table = historyTable([before, after, third]).split('\n');
  assert.equal(table[0], '| measure | 2026-11-20 10:00 | 2026-11-21 10:00 | 2026-11-22 10:00 | median |');
  assert.equal(table[1], '|---|--:|--:|--:|--:|');
  assert.ok(table.includes('| forwarding vs nginx proxy (≥ 0.6 × req/s) | 0.5 | 0.625 | 0.7 | **0.625** |'));
  // Never measured in any run: no row.
  assert.ok(!table.some((row) => row.startsWith('| monitoring CPU')));
  assert.ok(table.includes('| single · switchyard, req/s | 20,000 | 25,000 | 30,000 | **25,000** |'));
  assert.ok(table.includes('| batch100 · switchyard, req/s | 1,000 | 8,000 | – | **4,500** |'));
  assert.ok(!table.some((row) => row.startsWith('| anvil')), 'skipped legs have no row');
});

test('lastFullRuns: the newest five full-mode results in the folder, oldest first; other files ignored', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-history-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (let day = 1; day <= 7; day++) {
    const started = `2026-11-0${day}T00:00:00.000Z`;
    writeFileSync(join(dir, `run-${day}.json`), JSON.stringify(report(started, [], [])));
  }
  writeFileSync(join(dir, 'quick.json'), JSON.stringify(report('2026-11-09T00:00:00.000Z', [], [], 'quick')));
  writeFileSync(join(dir, 'other.json'), '{"schema":"something else"}');
  writeFileSync(join(dir, 'broken.json'), '{');
  writeFileSync(join(dir, 'notes.md'), '# not a report');
  const runs = lastFullRuns(dir);
  assert.deepEqual(
    runs.map((r) => r.started_at.slice(0, 10)),
    ['2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06', '2026-11-07'],
  );
});
