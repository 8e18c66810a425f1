import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, test } from 'node:test';
import type { LegResult } from '../../bench/legs.js';
import type { BenchReport } from '../../bench/report.js';
import { findTools } from '../../bench/tools.js';
import { waitForPidsGone } from '../helpers/anvil.js';
import { REPO_ROOT } from '../helpers/cli.js';

/**
 * `npm run bench -- --quick` end to end: nginx, wrk, anvil and a spawned Switchyard, one short leg
 * each, and a well-formed results file. Without nginx/wrk (not root, no apt) the harness skips those
 * legs and says so; this test then reports the skip instead of failing (npm test installs them).
 * Interrupted by SIGINT in the middle of a leg, the bench ends every process it started (nginx,
 * Switchyard) by PID and exits 130.
 */

const out = mkdtempSync(join(tmpdir(), 'switchyard-bench-test-'));
after(() => rmSync(out, { recursive: true, force: true }));

function runBench(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench/run.ts'), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bench did not finish within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const SCENARIOS = [
  'single',
  'cached',
  'light',
  'batch100',
  'large10mb',
  'anvil',
  'pool-size',
  'degraded',
  'verify',
  'wsread',
  'wsfanout',
  'mgmt',
];

test('bench --quick runs every leg and writes a well-formed JSON and Markdown report', async (t) => {
  const run = await runBench(['--quick', '--out', out], 300_000);
  assert.equal(run.code, 0, `bench exited ${run.code}\n${run.stderr.slice(-3000)}`);

  const files = readdirSync(out).sort();
  const json = files.find((f) => /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.json$/.test(f));
  assert.ok(json, `no <date>.json in ${files.join(', ')}`);
  assert.ok(files.includes(json.replace(/\.json$/, '.md')), 'the Markdown table sits next to the JSON');
  const report = JSON.parse(readFileSync(join(out, json), 'utf8')) as BenchReport;

  assert.equal(report.schema, 'switchyard-bench/1');
  assert.equal(report.mode, 'quick');
  assert.ok(Date.parse(report.finished_at) >= Date.parse(report.started_at));
  assert.deepEqual([...new Set(report.legs.map((l) => l.scenario))].sort(), [...SCENARIOS].sort());
  for (const target of ['direct', 'nginx', 'switchyard']) {
    assert.ok(
      report.legs.some((l) => l.target === target),
      `a ${target} leg`,
    );
  }
  assert.deepEqual(
    report.targets.map((x) => x.name),
    [
      'forwarding vs nginx proxy',
      'cached vs nginx proxy forwarding',
      'batch of 100 vs nginx proxy',
      '10 MiB pass-through RSS growth',
      'p50 added latency at light load',
      'WebSocket eth_blockNumber vs HTTP',
      'new head to every subscribed connection, p99',
      'RSS per idle subscribed WebSocket connection',
      'workers: 2 vs workers: 1, single read',
      'workers: 2 vs workers: 1, cached read',
      'workers: 2 vs workers: 1, batch of 100',
      'listing all pools, p50',
      'monitoring CPU',
      'a pool of 64 origins vs one origin',
      'a network of 20 pools vs one origin',
      'p99 with one origin stalling, hedged, vs three healthy origins',
    ],
  );

  const skipped = report.legs.filter((l) => l.status === 'skipped');
  if (skipped.length > 0) {
    t.diagnostic(`SKIPPED ${skipped.length} legs: ${[...new Set(skipped.map((l) => l.reason))].join('; ')}`);
    assert.ok(
      report.notes.some((n) => /SKIPPED|not found/.test(n)),
      'the report says why legs were skipped',
    );
  }
  const ran = report.legs.filter((l): l is LegResult & { status: 'ok' } => l.status === 'ok');
  const failed = report.legs.filter((l) => l.status === 'failed');
  assert.deepEqual(
    failed.map((l) => `${l.id}: ${l.reason}`),
    [],
    `failed legs; notes: ${report.notes.join(' | ')}`,
  );
  for (const leg of ran) {
    assert.ok((leg.requests ?? 0) > 0, `${leg.id} made requests`);
    // The fan-out leg counts deliveries, not requests per second (its own figures are checked below).
    if (leg.scenario !== 'wsfanout') assert.ok((leg.rps ?? 0) > 0, `${leg.id} req/s`);
    assert.ok(leg.latency_ms !== undefined && leg.latency_ms.p50 <= leg.latency_ms.p99, `${leg.id} latencies`);
    // The management leg's CPU is per monitoring window, not per listing (its own figures are checked below).
    if (leg.scenario !== 'mgmt') assert.ok((leg.cpu_us_per_request ?? -1) >= 0, `${leg.id} CPU per request`);
    assert.ok((leg.peak_rss_bytes ?? 0) > 0, `${leg.id} peak RSS`);
  }
  if (skipped.length === 0) {
    // With the tools present every Switchyard leg ran and was compared with nginx in the same run.
    const forwarding = ran.find((l) => l.id === 'single-switchyard');
    assert.ok(forwarding?.ratio_to_nginx !== undefined && forwarding.ratio_to_direct !== undefined);
    assert.ok(ran.find((l) => l.id === 'wsread-switchyard')?.ratio_to_http !== undefined, 'WebSocket read beside HTTP');
    const fanout = ran.find((l) => l.id === 'wsfanout-switchyard')?.fanout;
    assert.ok(fanout !== undefined && fanout.per_head.length === fanout.heads, 'the fan-out timed every head');
    assert.equal(fanout.connections, 5000);
    assert.ok(Number.isFinite(fanout.rss_per_idle_connection_bytes), 'RSS per idle connection');
    // The management leg (quick: 100 pools × 10 origins) listed every pool and saw every origin checked.
    const mgmt = ran.find((l) => l.id === 'mgmt-switchyard')?.mgmt;
    assert.ok(mgmt !== undefined, 'the management leg ran');
    assert.deepEqual([mgmt.pools, mgmt.origins, mgmt.list.pages], [100, 1000, 1]);
    assert.ok(
      mgmt.list.ms.p50 > 0 && mgmt.monitoring.min_checks_per_origin >= 1,
      'listing timed, every origin checked',
    );
    assert.ok(mgmt.monitoring.cpu_share_of_core > 0 && mgmt.monitoring.checks_per_s > 0, 'monitoring measured');
    // The routing legs (SPEC §17): three pool sizes, and the degraded pool with the origin calls it cost.
    assert.deepEqual(
      ran.filter((l) => l.scenario === 'pool-size' || l.scenario === 'degraded').map((l) => l.id),
      ['pool-size-one', 'pool-size-64', 'pool-size-20pools', 'degraded-healthy', 'degraded-nohedge', 'degraded-hedge'],
    );
    for (const leg of ran.filter((l) => l.scenario === 'degraded')) {
      assert.ok((leg.routing?.origin_calls_per_request ?? 0) >= 1, `${leg.id} counted its origin calls`);
    }
    // The verified-answer legs (SPEC §18): proofs beside off, with the origin calls a verified call cost.
    assert.deepEqual(
      ran.filter((l) => l.scenario === 'verify').map((l) => l.id),
      ['verify-balance-off', 'verify-balance-proofs', 'verify-call-off', 'verify-call-proofs'],
    );
    for (const leg of ran.filter((l) => l.scenario === 'verify')) {
      assert.ok((leg.verify?.origin_calls_per_request ?? 0) >= 1, `${leg.id} counted its origin calls`);
    }
    assert.deepEqual(
      report.targets.filter((x) => x.value === undefined).map((x) => x.name),
      report.targets.filter((x) => x.name.startsWith('workers: ')).map((x) => x.name),
      'every target was measured but the workers ones (no --workers)',
    );
    assert.ok(!report.legs.some((l) => l.workers !== undefined), 'no workers legs without --workers');
  }

  const md = readFileSync(join(out, json.replace(/\.json$/, '.md')), 'utf8');
  assert.match(md, /\| leg \| target \| conns \| req\/s \| × nginx \| × direct \|/);
  for (const leg of report.legs) assert.ok(md.includes(`| ${leg.title} | ${leg.target} |`), `row for ${leg.id}`);
  assert.match(run.stdout, /results: .*\.json/);
});

test("bench --quick --workers 2 runs the Switchyard legs with workers: 2 beside workers: 1, with each process's CPU", async (t) => {
  const dir = mkdtempSync(join(out, 'workers-'));
  const run = await runBench(
    ['--quick', '--workers', '2', '--only', 'single,cached,batch100', '--no-anvil', '--out', dir],
    240_000,
  );
  assert.equal(run.code, 0, `bench exited ${run.code}\n${run.stderr.slice(-3000)}`);
  const json = readdirSync(dir).find((f) => f.endsWith('.json'));
  assert.ok(json, 'a results file');
  const report = JSON.parse(readFileSync(join(dir, json), 'utf8')) as BenchReport;
  assert.equal(report.settings.workers, 2);
  const switchyard = report.legs.filter((l) => l.target === 'switchyard').map((l) => l.id);
  assert.deepEqual(switchyard.sort(), [
    'batch100-switchyard',
    'batch100-switchyard-w2',
    'cached-switchyard',
    'cached-switchyard-w2',
    'single-switchyard',
    'single-switchyard-w2',
  ]);
  const skipped = report.legs.filter((l) => l.status === 'skipped');
  if (skipped.length > 0) {
    t.diagnostic(`SKIPPED ${skipped.length} legs: ${[...new Set(skipped.map((l) => l.reason))].join('; ')}`);
    return;
  }
  assert.deepEqual(
    report.legs.filter((l) => l.status !== 'ok').map((l) => `${l.id}: ${l.reason}`),
    [],
    `failed legs; notes: ${report.notes.join(' | ')}`,
  );
  for (const scenario of ['single', 'cached', 'batch100']) {
    const many = report.legs.find((l) => l.id === `${scenario}-switchyard-w2`);
    const one = report.legs.find((l) => l.id === `${scenario}-switchyard`);
    assert.equal(many?.workers, 2);
    assert.equal(one?.workers, undefined);
    assert.ok(many?.rps !== undefined && one?.rps !== undefined);
    assert.equal(many.ratio_to_workers1, Math.round((many.rps / one.rps) * 1000) / 1000, `${scenario} ratio`);
    // The control process and two workers, each with its CPU per request; the leg's figure is their sum.
    const roles = (many.processes ?? []).map((p) => p.role);
    assert.deepEqual(roles, ['control', 'worker', 'worker'], `${scenario} processes`);
    const pids = new Set(many.processes?.map((p) => p.pid));
    assert.equal(pids.size, 3, 'three distinct PIDs');
    const sum = (many.processes ?? []).reduce((s, p) => s + p.cpu_us_per_request, 0);
    assert.ok(Math.abs(sum - (many.cpu_us_per_request ?? -1)) < 0.05, `${scenario}: CPU is the sum of the processes`);
    // Each worker served some of the load (round-robin over 32 connections).
    for (const p of many.processes ?? [])
      if (p.role === 'worker') assert.ok(p.cpu_us_per_request > 0, `worker ${p.pid} worked`);
  }
  const targets = report.targets.filter((x) => x.name.startsWith('workers: 2 vs workers: 1'));
  assert.equal(targets.length, 3);
  for (const target of targets) assert.ok(target.value !== undefined && target.met !== undefined, target.name);
  const md = readFileSync(join(dir, json.replace(/\.json$/, '.md')), 'utf8');
  assert.match(md, /### gateway\.workers: 2 beside workers: 1/);
  assert.match(md, /\| switchyard \(workers: 2\) \|/);
  assert.match(run.stdout, /\(workers: 2\): [\d,]+ req\/s = [\d.]+× workers: 1; CPU µs\/req control/);
});

/** The PIDs whose parent is `pid` (read from /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** The program a process runs ('' once it is gone). */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
  } catch {
    return '';
  }
}

test('interrupted by SIGINT, the bench ends every process it started and exits 130', async (t) => {
  if (findTools().problems.length > 0) {
    t.skip(`nginx or wrk missing: ${findTools().problems.join(', ')}`);
    return;
  }
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'bench/run.ts'), '--quick', '--no-anvil', '--only', 'single', '--out', out],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stderr = '';
  const legRunning = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no leg started within 300 s:\n${stderr}`)), 300_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // "bench: single-switchyard: 2 s, 32 connection(s)…": nginx and Switchyard are up.
      if (/bench: single-\S+: [\d.]+ s, \d+ connection/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => reject(new Error(`the bench ended before a leg ran:\n${stderr}`)));
  });
  try {
    await legRunning;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  // Its children, but wrk: it ends by itself, after its seconds.
  const started = childrenOf(child.pid as number).filter((pid) => basename(commandOf(pid)) !== 'wrk');
  assert.ok(started.length >= 2, `nginx and Switchyard run: ${started.join(', ')}`);
  child.kill('SIGINT');
  try {
    assert.equal(await exited, 130, stderr.slice(-2000));
    assert.deepEqual(await waitForPidsGone(started, 10_000), [], 'every process it started has ended');
  } finally {
    // Whatever the outcome, nothing this test caused is left running.
    for (const pid of await waitForPidsGone(started, 0)) process.kill(pid, 'SIGKILL');
  }
});
