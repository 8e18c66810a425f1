/**
 * One leg = one target (direct upstream, nginx proxy, Switchyard) under one scenario (single read,
 * light load, cached read, batch of 100, 10 MiB answer, anvil), driven by wrk for a fixed time. (The
 * WebSocket scenarios, `wsread` and `wsfanout`, have their own driver: ws-legs.ts.)
 * Before the load, one request checks the answer is byte-for-byte the expected one (so a fast wrong
 * answer never counts); around the load the server-under-test's CPU ticks and memory are read — for a
 * Switchyard with `gateway.workers` > 1, those of its control process and of each worker (its children).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MgmtFigures } from './mgmt-figures.js';
import type { Exchange } from './payloads.js';
import {
  cpuSample,
  memorySample,
  resetPeak,
  resetTreePeak,
  type TreeCpuSample,
  treeCpuSample,
  treeMemorySample,
} from './procstat.js';
import type { RoutingFigures } from './routing-legs.js';
import type { VerifyFigures } from './verify-leg.js';
import { runWrk, type WrkResult } from './wrk.js';
import type { FanoutFigures } from './ws-fanout-leg.js';

export type Scenario =
  | 'single'
  | 'light'
  | 'cached'
  | 'batch100'
  | 'large10mb'
  | 'anvil'
  | 'wsread'
  | 'wsfanout'
  | 'mgmt'
  | 'pool-size'
  | 'degraded'
  | 'verify';
export type Target = 'direct' | 'nginx' | 'switchyard';

export const SCENARIO_TITLES: Record<Scenario, string> = {
  single: 'single read (eth_blockNumber)',
  light: 'light load, 1 connection',
  cached: 'cached read (eth_chainId)',
  batch100: 'batch of 100',
  large10mb: '10 MiB eth_getLogs answer',
  anvil: 'real anvil (eth_blockNumber)',
  wsread: 'WebSocket eth_blockNumber',
  wsfanout: 'WebSocket newHeads fan-out',
  mgmt: 'management API',
  'pool-size': 'routing: pool size',
  degraded: 'routing: a degraded origin',
  verify: 'verified answers (eth_getBalance, eth_call)',
};

export interface LegPlan {
  id: string;
  scenario: Scenario;
  target: Target;
  url: string;
  exchange: Exchange;
  connections: number;
  /** The process whose CPU and memory the leg reports: the proxy, or for `direct` the upstream. */
  serverPid: number;
  /** The upstream's PID, to report its share of the work too (absent for anvil's own process). */
  upstreamPid?: number;
  /**
   * Switchyard's `gateway.workers` when > 1: `serverPid` is then the control process, and CPU and memory
   * are read for it and each of its children (the workers) too.
   */
  workers?: number;
}

/** One process of a Switchyard with workers > 1, over one leg. */
export interface ProcessCpu {
  role: 'control' | 'worker';
  pid: number;
  /** This process's CPU (user + system) over the leg ÷ every request of the leg, microseconds. */
  cpu_us_per_request: number;
  /** Its kernel share: stime ÷ (utime + stime). */
  cpu_system_share?: number;
}

export interface LegResult {
  id: string;
  scenario: Scenario;
  target: Target;
  title: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  connections: number;
  request_bytes: number;
  response_bytes: number;
  requests?: number;
  seconds?: number;
  rps?: number;
  latency_ms?: { p50: number; p90: number; p99: number; mean: number; max: number };
  errors?: WrkResult['errors'];
  /**
   * CPU time (user + system) of the server under test per request, microseconds; with workers > 1 the sum
   * over the control process and its workers (each one in `processes`).
   */
  cpu_us_per_request?: number;
  /** Switchyard's `gateway.workers`, only when > 1 (legs without it ran with the default, 1). */
  workers?: number;
  /** With workers > 1: the control process's and each worker's CPU per request of the leg. */
  processes?: ProcessCpu[];
  /** With workers > 1: req/s over the same scenario's Switchyard leg with workers: 1, in the same run. */
  ratio_to_workers1?: number;
  upstream_cpu_us_per_request?: number;
  rss_before_bytes?: number;
  peak_rss_bytes?: number;
  /** peak − before; only meaningful when `peak_is_per_leg`. */
  rss_growth_bytes?: number;
  peak_is_per_leg?: boolean;
  /**
   * Time the target needed before it answered correctly again after the previous load (warm-up or the
   * leg before). Non-zero means the proxy was not in a steady state when the load stopped.
   */
  settled_ms?: number;
  ratio_to_nginx?: number;
  ratio_to_direct?: number;
  /** wsread: requests each connection keeps in flight (wrk's HTTP/1.1 connections: 1). */
  inflight_per_connection?: number;
  /** wsread: what went wrong on the WebSocket connections (all zero in an `ok` leg). */
  ws_errors?: { wrong_answer: number; closed: number; socket: number };
  /** WebSocket legs: CPU of the load client per request (wsread) or per delivery (wsfanout), µs. */
  client_cpu_us_per_request?: number;
  /** WebSocket legs: the part of the gateway's CPU spent in the kernel (stime ÷ utime + stime). */
  cpu_system_share?: number;
  /** wsread: req/s over the HTTP single-read leg's Switchyard req/s in the same run. */
  ratio_to_http?: number;
  /**
   * wsfanout: `requests` are deliveries (heads × connections), `latency_ms` is the spread over heads of
   * the time from a head's push to the gateway until its last delivery, `cpu_us_per_request` the gateway's
   * CPU per delivery; the rest is here.
   */
  fanout?: FanoutFigures;
  /**
   * mgmt (mgmt-leg.ts): `requests`, `latency_ms` and `rps` are the timed listings of every pool (one after
   * another, so rps = 1000 ÷ mean ms), the rest —
   * the monitoring window's CPU and the fleet's checks — is here.
   */
  mgmt?: MgmtFigures;
  /** degraded (routing-legs.ts): the stall and what hedging cost in origin calls. */
  routing?: RoutingFigures;
  /** verify (verify-leg.ts): the leg's verify mode and the origin calls each client request cost. */
  verify?: VerifyFigures;
}

export function skippedLeg(
  plan: Pick<LegPlan, 'id' | 'scenario' | 'target' | 'connections' | 'exchange' | 'workers'>,
  reason: string,
): LegResult {
  return { ...base(plan), status: 'skipped', reason };
}

function base(plan: Pick<LegPlan, 'id' | 'scenario' | 'target' | 'connections' | 'exchange' | 'workers'>): LegResult {
  return {
    id: plan.id,
    scenario: plan.scenario,
    target: plan.target,
    ...(plan.workers !== undefined && plan.workers > 1 ? { workers: plan.workers } : {}),
    title: SCENARIO_TITLES[plan.scenario],
    status: 'ok',
    connections: plan.connections,
    request_bytes: Buffer.byteLength(plan.exchange.request),
    response_bytes: Buffer.byteLength(plan.exchange.response),
  };
}

/** POSTs the request once and checks the answer bytes; returns a problem description or undefined. */
export async function checkAnswer(url: string, exchange: Exchange): Promise<string | undefined> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: exchange.request,
    signal: AbortSignal.timeout(30_000),
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) return `HTTP ${response.status}: ${body.subarray(0, 300).toString()}`;
  const expected = Buffer.from(exchange.response);
  if (!body.equals(expected)) {
    const at = firstDifference(body, expected);
    return `answer differs from the upstream's at byte ${at} (got ${body.length} bytes, want ${expected.length}): …${body
      .subarray(Math.max(0, at - 40), at + 40)
      .toString()}…`;
  }
  return undefined;
}

function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

/**
 * Waits (bounded) until the target answers the leg's request correctly. Right after a load stops, a
 * proxy may still be recovering (e.g. from clients that hung up mid-request); measuring then would
 * count that, not the steady state. Returns the time waited, or the last problem at the deadline.
 */
export async function settle(url: string, exchange: Exchange, timeoutMs = 15_000): Promise<number | string> {
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    const problem = await checkAnswer(url, exchange).catch((err: Error) => `request failed: ${err.message}`);
    if (problem === undefined) return attempt === 0 ? 0 : Date.now() - start;
    if (Date.now() - start > timeoutMs) return problem;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function runLeg(
  plan: LegPlan,
  settings: { wrk: string; workDir: string; seconds: number; warmupSeconds: number; threads: number },
): Promise<LegResult> {
  const result = base(plan);
  const problem = await checkAnswer(plan.url, plan.exchange).catch((err: Error) => `request failed: ${err.message}`);
  if (problem !== undefined) {
    // Maybe still recovering from the previous leg's load: give it a bounded moment, and say so.
    const waited = await settle(plan.url, plan.exchange);
    if (typeof waited === 'string') return { ...result, status: 'failed', reason: waited };
    result.settled_ms = waited;
  }

  const bodyFile = join(settings.workDir, `${plan.id}.request.json`);
  writeFileSync(bodyFile, plan.exchange.request);
  const wrkOptions = {
    binary: settings.wrk,
    url: plan.url,
    bodyFile,
    connections: plan.connections,
    threads: Math.min(settings.threads, plan.connections),
  };
  if (settings.warmupSeconds > 0) {
    await runWrk({ ...wrkOptions, seconds: settings.warmupSeconds });
    const waited = await settle(plan.url, plan.exchange);
    if (typeof waited === 'string') return { ...result, status: 'failed', reason: `after the warm-up: ${waited}` };
    if (waited > 0) result.settled_ms = (result.settled_ms ?? 0) + waited;
  }

  const tree = plan.workers !== undefined && plan.workers > 1;
  const memBefore = tree ? treeMemorySample(plan.serverPid) : memorySample(plan.serverPid);
  const perLeg = tree ? resetTreePeak(plan.serverPid) : resetPeak(plan.serverPid);
  const treeBefore = tree ? treeCpuSample(plan.serverPid) : undefined;
  const cpuBefore = cpuSample(plan.serverPid).cpuMicros;
  const upBefore = plan.upstreamPid === undefined ? undefined : cpuSample(plan.upstreamPid).cpuMicros;
  const wrk = await runWrk({ ...wrkOptions, seconds: settings.seconds });
  const cpuAfter = cpuSample(plan.serverPid).cpuMicros;
  const treeAfter = tree ? treeCpuSample(plan.serverPid) : undefined;
  const upAfter = plan.upstreamPid === undefined ? undefined : cpuSample(plan.upstreamPid).cpuMicros;
  const memAfter = tree ? treeMemorySample(plan.serverPid) : memorySample(plan.serverPid);

  const errorCount = Object.values(wrk.errors).reduce((sum, n) => sum + n, 0);
  const requests = wrk.requests;
  const perRequest = (micros: number): number => (requests > 0 ? round(micros / requests, 2) : 0);
  const processes =
    treeBefore === undefined || treeAfter === undefined
      ? undefined
      : processCpu(treeBefore, treeAfter, plan.workers ?? 1, perRequest);
  const measured: LegResult = {
    ...result,
    requests,
    seconds: round(wrk.durationSeconds, 3),
    rps: round(requests / wrk.durationSeconds, 1),
    latency_ms: {
      p50: ms(wrk.latencyMicros.p50),
      p90: ms(wrk.latencyMicros.p90),
      p99: ms(wrk.latencyMicros.p99),
      mean: ms(wrk.latencyMicros.mean),
      max: ms(wrk.latencyMicros.max),
    },
    errors: wrk.errors,
    cpu_us_per_request:
      processes === undefined
        ? perRequest(cpuAfter - cpuBefore)
        : round(
            processes.list.reduce((sum, p) => sum + p.cpu_us_per_request, 0),
            2,
          ),
    ...(processes === undefined ? {} : { processes: processes.list }),
    ...(upBefore === undefined || upAfter === undefined
      ? {}
      : { upstream_cpu_us_per_request: perRequest(upAfter - upBefore) }),
    rss_before_bytes: memBefore.rssBytes,
    peak_rss_bytes: memAfter.peakRssBytes,
    rss_growth_bytes: Math.max(0, memAfter.peakRssBytes - memBefore.rssBytes),
    peak_is_per_leg: perLeg,
  };
  if (requests === 0) return { ...measured, status: 'failed', reason: 'no request completed' };
  if (processes?.problem !== undefined) return { ...measured, status: 'failed', reason: processes.problem };
  if (errorCount > 0) {
    // One more request right after the load, to show what the errors looked like.
    const after = await checkAnswer(plan.url, plan.exchange).catch((err: Error) => `request failed: ${err.message}`);
    const sample = after === undefined ? '' : `; a request right after: ${after}`;
    return {
      ...measured,
      status: 'failed',
      reason: `${errorCount} request errors: ${JSON.stringify(wrk.errors)}${sample}`,
    };
  }
  return measured;
}

/**
 * Each process's CPU over the leg, from samples of the control process and its children before and after.
 * A worker that was not there at both ends (it crashed and was replaced mid-leg) makes its CPU unknown:
 * that is reported as a problem (the leg fails), with the PIDs; so is a count of children other than
 * `workers`.
 */
function processCpu(
  before: TreeCpuSample,
  after: TreeCpuSample,
  workers: number,
  perRequest: (micros: number) => number,
): { list: ProcessCpu[]; problem?: string } {
  const share = (total: number, system: number): { cpu_system_share?: number } =>
    total > 0 ? { cpu_system_share: round(system / total, 3) } : {};
  const rootCpu = after.root.cpuMicros - before.root.cpuMicros;
  const list: ProcessCpu[] = [
    {
      role: 'control',
      pid: after.root.pid,
      cpu_us_per_request: perRequest(rootCpu),
      ...share(rootCpu, after.root.systemMicros - before.root.systemMicros),
    },
  ];
  for (const child of after.children) {
    const was = before.children.find((c) => c.pid === child.pid);
    if (was === undefined) continue;
    const cpu = child.cpuMicros - was.cpuMicros;
    list.push({
      role: 'worker',
      pid: child.pid,
      cpu_us_per_request: perRequest(cpu),
      ...share(cpu, child.systemMicros - was.systemMicros),
    });
  }
  const pids = (s: TreeCpuSample): string => s.children.map((c) => c.pid).join(',');
  const problem =
    pids(before) !== pids(after)
      ? `the workers changed during the leg (PIDs ${pids(before) || 'none'} before, ${pids(after) || 'none'} after)`
      : after.children.length !== workers
        ? `${after.children.length} child processes of the control process, expected ${workers} workers`
        : undefined;
  return problem === undefined ? { list } : { list, problem };
}

function ms(micros: number): number {
  return round(micros / 1000, 3);
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
