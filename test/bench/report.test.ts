import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LegResult } from '../../bench/legs.js';
import { parseOptions } from '../../bench/options.js';
import {
  addRatios,
  type BenchReport,
  checkTargets,
  markdown,
  NO_SLOWER,
  summaryLines,
  targetLabel,
} from '../../bench/report.js';

/** The report's arithmetic on hand-made legs: ratios, targets, the Markdown table. */

function leg(scenario: LegResult['scenario'], target: LegResult['target'], extra: Partial<LegResult> = {}): LegResult {
  return {
    id: `${scenario}-${target}`,
    scenario,
    target,
    title: scenario,
    status: 'ok',
    connections: 32,
    request_bytes: 60,
    response_bytes: 10 * 1_048_576,
    rps: 1000,
    latency_ms: { p50: 1, p90: 2, p99: 3, mean: 1, max: 4 },
    ...extra,
  };
}

const legs = addRatios([
  leg('single', 'direct', { rps: 40_000 }),
  leg('single', 'nginx', { rps: 20_000 }),
  leg('single', 'switchyard', { rps: 12_000 }),
  leg('cached', 'switchyard', { rps: 25_000 }),
  leg('light', 'direct', { latency_ms: { p50: 0.05, p90: 0, p99: 0.1, mean: 0, max: 0 } }),
  leg('light', 'switchyard', { latency_ms: { p50: 0.2, p90: 0, p99: 0.5, mean: 0, max: 0 } }),
  leg('large10mb', 'switchyard', { rss_growth_bytes: 15 * 1_048_576, peak_is_per_leg: true }),
  leg('batch100', 'switchyard', { status: 'skipped', reason: 'nginx not found', rps: undefined }),
]);

test('ratios compare with nginx and direct of the same scenario; the cached leg with plain forwarding', () => {
  const byId = Object.fromEntries(legs.map((l) => [l.id, l]));
  assert.equal(byId['single-switchyard']?.ratio_to_nginx, 0.6);
  assert.equal(byId['single-switchyard']?.ratio_to_direct, 0.3);
  assert.equal(byId['cached-switchyard']?.ratio_to_nginx, 1.25);
  assert.equal(byId['batch100-switchyard']?.ratio_to_nginx, undefined);
});

test('targets are measured from the legs and marked met or missed', () => {
  const targets = Object.fromEntries(checkTargets(legs).map((t) => [t.name, t]));
  assert.deepEqual(
    [targets['forwarding vs nginx proxy']?.value, targets['forwarding vs nginx proxy']?.met],
    [0.6, true],
  );
  // SPEC §12: cache hits ≥ 1.3× nginx forwarding, 10 MiB pass-through growth ≤ 1× the body.
  assert.deepEqual(
    [targets['cached vs nginx proxy forwarding']?.value, targets['cached vs nginx proxy forwarding']?.met],
    [1.25, false],
  );
  assert.deepEqual(
    [targets['10 MiB pass-through RSS growth']?.value, targets['10 MiB pass-through RSS growth']?.met],
    [1.5, false],
  );
  // The batch leg was skipped: its target is listed, not measured.
  assert.deepEqual(
    [targets['batch of 100 vs nginx proxy']?.value, targets['batch of 100 vs nginx proxy']?.goal],
    [undefined, '≥ 0.4'],
  );
  assert.deepEqual(
    [targets['p50 added latency at light load']?.value, targets['p50 added latency at light load']?.met],
    [0.15, true],
  );
  const missing = checkTargets(legs.filter((l) => l.target !== 'nginx'));
  assert.equal(missing.find((t) => t.name === 'forwarding vs nginx proxy')?.met, undefined);
});

test('the Markdown table has a row per leg and says why a leg was skipped', () => {
  const report: BenchReport = {
    schema: 'switchyard-bench/1',
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:01:00.000Z',
    mode: 'quick',
    machine: { cpus: 2, cpu_model: 'x', node: 'v20', load_average: [0, 0, 0] },
    settings: { seconds: 1, connections: 32, threads: 1, large_connections: 1 },
    notes: ['a note'],
    legs,
    targets: checkTargets(legs),
  };
  const md = markdown(report);
  const rows = md
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| leg') && !line.startsWith('| target'));
  assert.equal(rows.length, legs.length + checkTargets(legs).length);
  assert.match(md, /skipped: nginx not found/);
  assert.match(md, /- a note/);
  assert.ok(summaryLines(report).some((line) => line.includes('0.60× nginx')));
});

test('options: --quick shortens legs; bad values are refused with the usage', () => {
  const quick = parseOptions(['--quick', '--out', '/tmp/x']);
  assert.deepEqual([quick.quick, quick.seconds, quick.warmupSeconds, quick.outDir], [true, 1, 0, '/tmp/x']);
  const full = parseOptions([]);
  assert.deepEqual([full.seconds, full.connections, full.install], [10, 32, true]);
  assert.throws(() => parseOptions(['--seconds', 'x']), /whole number/);
  assert.throws(() => parseOptions(['--bogus']), /unknown option --bogus[\s\S]*usage/);
});

test('the 10 MiB RSS target counts only the growth beyond the light-load leg of the same process', () => {
  const withLight = addRatios([
    leg('light', 'switchyard', { rss_growth_bytes: 5 * 1_048_576, peak_is_per_leg: true }),
    leg('large10mb', 'switchyard', { rss_growth_bytes: 15 * 1_048_576, peak_is_per_leg: true }),
  ]);
  const target = checkTargets(withLight).find((t) => t.name === '10 MiB pass-through RSS growth');
  assert.deepEqual([target?.value, target?.met], [1, true]);
  const notPerLeg = checkTargets([leg('large10mb', 'switchyard', { rss_growth_bytes: 1, peak_is_per_leg: false })]);
  assert.equal(notPerLeg.find((t) => t.name === '10 MiB pass-through RSS growth')?.value, undefined);
});

test('WebSocket legs: the read leg is compared with the HTTP leg, the fan-out gives its own targets and table', () => {
  const fanout = {
    connections: 5000,
    heads: 30,
    warmup_heads: 5,
    notification_bytes: 1793,
    last_delivery_ms: { p50: 60, p90: 80, p99: 120, mean: 65, max: 120 },
    first_delivery_ms: { p50: 1, p90: 2, p99: 3, mean: 1, max: 3 },
    median_delivery_ms: { p50: 30, p90: 40, p99: 50, mean: 31, max: 50 },
    per_head: [],
    missing: 0,
    wrong: 0,
    extra: 0,
    closed_early: 0,
    subscribe_seconds: 4,
    idle_ms: 3000,
    rss_after_full_gc: true,
    rss_before_connections_bytes: 100 * 1_048_576,
    rss_idle_bytes: 150 * 1_048_576,
    rss_per_idle_connection_bytes: 10_486,
    gateway_cpu_ms_per_head: 100,
    client_cpu_ms_per_head: 90,
    client_rss_bytes: 300 * 1_048_576,
  };
  const ws = addRatios([
    leg('single', 'nginx', { rps: 20_000 }),
    leg('single', 'switchyard', { rps: 12_000 }),
    leg('wsread', 'switchyard', { rps: 10_800, inflight_per_connection: 1, cpu_system_share: 0.5 }),
    leg('wsfanout', 'switchyard', {
      rps: undefined,
      connections: 5000,
      latency_ms: fanout.last_delivery_ms,
      fanout,
    }),
  ]);
  const read = ws.find((l) => l.id === 'wsread-switchyard');
  assert.deepEqual([read?.ratio_to_http, read?.ratio_to_nginx], [0.9, 0.54]);
  const targets = Object.fromEntries(checkTargets(ws).map((t) => [t.name, t]));
  assert.deepEqual(
    [targets['WebSocket eth_blockNumber vs HTTP']?.value, targets['WebSocket eth_blockNumber vs HTTP']?.met],
    [0.9, true],
  );
  const p99 = targets['new head to every subscribed connection, p99'];
  assert.deepEqual([p99?.value, p99?.met, p99?.unit], [120, false, 'ms (5000 connections)']);
  const rss = targets['RSS per idle subscribed WebSocket connection'];
  assert.deepEqual([rss?.value, rss?.met], [10.2, true]);

  const md = markdown({
    schema: 'switchyard-bench/1',
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:01:00.000Z',
    mode: 'full',
    machine: { cpus: 2, cpu_model: 'x', node: 'v20', load_average: [0, 0, 0] },
    settings: { seconds: 10, connections: 32, threads: 1, large_connections: 1 },
    notes: [],
    legs: ws,
    targets: checkTargets(ws),
  });
  assert.match(md, /\| wsread \| 32 × 1 \| 10,800 \| 0\.90 \|/);
  assert.match(md, /newHeads fan-out: 5000 connections, 30 heads/);
  assert.match(
    md,
    /\| last delivery after the head's push, ms \(p50 \/ p99 \/ max over heads\) \| 60\.0 \/ 120\.0 \/ 120\.0 \|/,
  );
  assert.match(md, /\| RSS per idle subscribed connection \| 10\.2 KiB \|/);
  const summary = summaryLines({ ...({} as BenchReport), legs: ws, targets: checkTargets(ws) });
  assert.ok(summary.some((line) => line.includes('0.90× HTTP')));
  assert.ok(summary.some((line) => line.includes('last delivery p50 60.0 ms, p99 120.0 ms')));
});

test('options: the WebSocket legs have their own knobs', () => {
  const full = parseOptions([]);
  assert.deepEqual([full.wsInflight, full.wsConnections, full.wsHeads], [1, 5000, 30]);
  assert.equal(parseOptions(['--quick']).wsHeads, 5);
  const set = parseOptions(['--ws-inflight', '4', '--ws-connections', '100', '--ws-heads', '3', '--quick']);
  assert.deepEqual([set.wsInflight, set.wsConnections, set.wsHeads], [4, 100, 3]);
});

test('options: --workers N asks for the second Switchyard (2 by default in a full run); 1 or --quick keeps one; more than 256 is refused', () => {
  assert.equal(parseOptions([]).workers, 2, 'a full run reports workers: 2 beside 1');
  assert.equal(parseOptions(['--quick']).workers, undefined);
  assert.equal(parseOptions(['--workers', '1']).workers, undefined);
  assert.equal(parseOptions(['--workers', '2', '--quick']).workers, 2);
  assert.throws(() => parseOptions(['--workers', '300']), /at most 256/);
  assert.throws(() => parseOptions(['--workers', 'auto']), /whole number/);
  assert.deepEqual(
    [parseOptions([]).workersFirst, parseOptions(['--workers', '2', '--workers-first']).workersFirst],
    [false, true],
  );
});

test('workers legs: compared with workers: 1 of the same scenario, reported as SPEC §12 targets and in their own table', () => {
  const processes = (control: number, a: number, b: number): LegResult['processes'] => [
    { role: 'control', pid: 10, cpu_us_per_request: control },
    { role: 'worker', pid: 11, cpu_us_per_request: a },
    { role: 'worker', pid: 12, cpu_us_per_request: b },
  ];
  const w = addRatios([
    leg('single', 'nginx', { rps: 20_000 }),
    leg('single', 'switchyard', { rps: 10_000, cpu_us_per_request: 40 }),
    leg('single', 'switchyard', {
      id: 'single-switchyard-w2',
      workers: 2,
      rps: 12_000,
      cpu_us_per_request: 46,
      processes: processes(2, 22, 22),
    }),
    leg('cached', 'switchyard', { id: 'cached-switchyard-w2', workers: 2, rps: 30_000, processes: processes(1, 9, 9) }),
    leg('cached', 'switchyard', { rps: 31_000 }),
    leg('batch100', 'switchyard', { rps: 1000 }),
    leg('batch100', 'switchyard', { id: 'batch100-switchyard-w2', workers: 2, rps: 900 }),
  ]);
  const byId = Object.fromEntries(w.map((l) => [l.id, l]));
  // The workers: 1 leg stays the one compared with nginx and used by the other targets.
  assert.equal(byId['single-switchyard']?.ratio_to_nginx, 0.5);
  assert.equal(byId['single-switchyard']?.ratio_to_workers1, undefined);
  assert.deepEqual(
    [byId['single-switchyard-w2']?.ratio_to_workers1, byId['single-switchyard-w2']?.ratio_to_nginx],
    [1.2, 0.6],
  );
  assert.equal(byId['cached-switchyard-w2']?.ratio_to_workers1, 0.968);
  const targets = Object.fromEntries(checkTargets(w).map((t) => [t.name, t]));
  assert.equal(targets['forwarding vs nginx proxy']?.value, 0.5);
  assert.equal(NO_SLOWER, 0.95);
  assert.deepEqual(
    ['single read', 'cached read', 'batch of 100'].map((s) => {
      const t = targets[`workers: 2 vs workers: 1, ${s}`];
      return [t?.value, t?.met, t?.goal];
    }),
    [
      [1.2, true, '≥ 0.95'],
      [0.968, true, '≥ 0.95'],
      [0.9, false, '≥ 0.95'],
    ],
  );
  // Without --workers the targets are listed, not measured.
  const none = checkTargets(w.filter((l) => l.workers === undefined)).find((t) => t.name.startsWith('workers: 2 vs'));
  assert.deepEqual([none?.value, none?.met], [undefined, undefined]);

  assert.equal(targetLabel(byId['single-switchyard-w2'] as LegResult), 'switchyard (workers: 2)');
  const md = markdown({
    schema: 'switchyard-bench/1',
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:01:00.000Z',
    mode: 'full',
    machine: { cpus: 2, cpu_model: 'x', node: 'v20', load_average: [0, 0, 0] },
    settings: { seconds: 10, connections: 32, threads: 1, large_connections: 1, workers: 2 },
    notes: [],
    legs: w,
    targets: checkTargets(w),
  });
  assert.match(md, /\| single \| switchyard \(workers: 2\) \| 32 \| 12,000 \|/);
  assert.match(md, /### gateway\.workers: 2 beside workers: 1/);
  assert.match(
    md,
    /\| single \| 1 \| 10,000 \| 1\.00 \| 1\.000 \| 3\.000 \| 40\.0 \| \(one process\) \| – \| 0\.40 \|/,
  );
  assert.match(
    md,
    /\| single \| 2 \| 12,000 \| 1\.20 \| 1\.000 \| 3\.000 \| 46\.0 \| 2\.0 \| 22\.0 \/ 22\.0 \| 0\.55 \|/,
  );
  const summary = summaryLines({ ...({} as BenchReport), legs: w, targets: checkTargets(w) });
  assert.ok(
    summary.some((line) =>
      line.includes('(workers: 2): 12,000 req/s = 1.20× workers: 1; CPU µs/req control 2.0, workers 22.0 / 22.0'),
    ),
  );
});

/** A management leg's figures (mgmt-leg.ts), hand-made. */
function mgmtLeg(cpuShare: number, p50: number): LegResult {
  return leg('mgmt', 'switchyard', {
    title: 'management API',
    connections: 1,
    rps: 50,
    latency_ms: { p50, p90: p50, p99: p50 * 2, mean: p50, max: p50 * 2 },
    mgmt: {
      pools: 1000,
      origins_per_pool: 10,
      origins: 10_000,
      monitor_type: 'jsonrpc',
      interval_s: 10,
      retries: 2,
      steady_after_s: 21,
      list: {
        requests: 200,
        per_page: 1000,
        pages: 1,
        answer_bytes: 1_700_000,
        ms: { p50, p90: p50, p99: p50 * 2, mean: p50, max: p50 * 2 },
      },
      monitoring: {
        window_s: 30,
        cpu_share_of_core: cpuShare,
        cpu_system_share: 0.2,
        cpu_us_per_check: 250,
        checks: 30_000,
        checks_per_s: 1000,
        expected_checks_per_s: 1000,
        min_checks_per_origin: 2,
        max_gap_ms: 10_900,
        p99_gap_ms: 10_800,
        rss_bytes: 200 * 1_048_576,
      },
    },
  });
}

test('SPEC §12 batch and management targets: batch vs the nginx batch leg, listing p50, monitoring CPU', () => {
  const all = addRatios([
    leg('batch100', 'nginx', { rps: 20_000 }),
    leg('batch100', 'switchyard', { rps: 8_000 }),
    mgmtLeg(0.2468, 12.5),
  ]);
  const targets = Object.fromEntries(checkTargets(all).map((t) => [t.name, t]));
  const batch = targets['batch of 100 vs nginx proxy'];
  assert.deepEqual([batch?.value, batch?.met, batch?.goal], [0.4, true, '≥ 0.4']);
  const list = targets['listing all pools, p50'];
  assert.deepEqual(
    [list?.value, list?.met, list?.goal, list?.unit],
    [12.5, true, '≤ 20', 'ms (1000 pools, per_page 1000)'],
  );
  const cpu = targets['monitoring CPU'];
  assert.deepEqual([cpu?.value, cpu?.met, cpu?.goal], [24.7, true, '< 25']);
  const missed = Object.fromEntries(checkTargets([mgmtLeg(0.25, 20.5)]).map((t) => [t.name, t]));
  assert.deepEqual([missed['listing all pools, p50']?.met, missed['monitoring CPU']?.met], [false, false]);
  // Monitors that fell behind fail the leg: its CPU is then not a measure of the target, the listing still is.
  const behind = { ...mgmtLeg(0.1, 15), status: 'failed' as const, reason: 'monitoring: 10 with a gap over 12000 ms' };
  const partial = Object.fromEntries(checkTargets([behind]).map((t) => [t.name, t]));
  assert.deepEqual([partial['listing all pools, p50']?.value, partial['monitoring CPU']?.value], [15, undefined]);

  const report = {
    ...({} as BenchReport),
    settings: {},
    machine: {},
    notes: [],
    legs: all,
    targets: checkTargets(all),
  };
  const md = markdown(report);
  assert.match(md, /### Management API: 1000 pools × 10 origins, jsonrpc monitors every 10 s/);
  assert.match(md, /\| monitoring CPU over 30\.0 s, no traffic \(of it kernel\) \| 24\.7 % of one core \(20 %\) \|/);
  assert.match(md, /\| checks seen at the fleet \| 1,000\.0\/s \(every origin every 10 s: 1,000\.0\/s\) \|/);
  assert.ok(
    summaryLines(report).some((line) =>
      line.includes(
        'listing 1000 pools p50 12.5 ms, p99 25.0 ms; monitoring 10000 origins every 10 s: 24.7 % of one core',
      ),
    ),
  );
});

test('options: the management leg shrinks in --quick; --compare takes one or two files, --history an optional folder', () => {
  const full = parseOptions([]);
  assert.deepEqual([full.mgmtPools, full.mgmtSeconds], [1000, 30]);
  const quick = parseOptions(['--quick']);
  assert.deepEqual([quick.mgmtPools, quick.mgmtSeconds], [100, 12]);
  assert.equal(parseOptions(['--mgmt-seconds', '5']).mgmtSeconds, 12, 'never shorter than one interval and its jitter');
  assert.equal(parseOptions(['--quick', '--mgmt-pools', '1000']).mgmtPools, 1000);
  assert.deepEqual(parseOptions(['--compare', 'a.json', '--quick']).compare, { before: 'a.json' });
  assert.deepEqual(parseOptions(['--compare', 'a.json', 'b.json']).compare, { before: 'a.json', after: 'b.json' });
  assert.equal(parseOptions(['--history', '/tmp/runs']).history, '/tmp/runs');
  assert.match(parseOptions(['--history']).history ?? '', /bench\/results$/);
});
