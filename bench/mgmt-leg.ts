/**
 * The management-API leg (`mgmt`, issue 18, SPEC §12): its own Switchyard (embedded SQLite, no networks,
 * no gateway traffic) whose config holds `pools` pools (default 1000, --quick 100) of `originsPerPool`
 * (10) origins each, in the routing account, each pool with its own inline monitor (`interval` 10 s,
 * `retries` 2, `timeout` 5 s, type `jsonrpc`). The origins are the fleet
 * (monitor-fleet.ts, a separate process): origin i of the whole fleet is its own address and path, so
 * every origin is checked separately although they share a few listeners.
 *
 * Steps, each bounded:
 * 1. start the fleet, write the config, make an API token with the CLI, start Switchyard (it seeds the
 *    pools and their monitors from the config on start);
 * 2. steady state: wait until the fleet has seen a check of every origin, then one more interval;
 * 3. monitoring cost: zero the fleet's counts, read Switchyard's CPU (/proc) over `windowSeconds`
 *    (full 30, quick 12: at least one interval plus the scheduler's ±10 % jitter), read the counts. The
 *    leg FAILS unless every origin was checked in the window and no origin went longer than
 *    interval × 1.1 + 1 s (GAP_SLACK_MS) between checks (or since its last one) — so the CPU figure is
 *    that of all origins checked every interval;
 * 4. listing: `GET /client/v4/accounts/{id}/load_balancers/pools?per_page=1000` (the API's largest page,
 *    api/pagination.ts; with more than 1000 pools every page is fetched and one listing is all pages),
 *    5 unmeasured, then `listRequests` (full 200, quick 30) one after another, each timed from the
 *    request to the last byte of the answer; the first answer must list every pool. The monitors keep
 *    running meanwhile, as they would in production.
 * Everything it starts is stopped by PID.
 */
import { performance } from 'node:perf_hooks';
import { Child } from './child.js';
import type { LegResult } from './legs.js';
import type { MgmtFigures } from './mgmt-figures.js';
import type { BenchOptions } from './options.js';
import { cpuSample, memorySample } from './procstat.js';
import { round, roundSpread, spread } from './stats.js';
import { SwitchyardProcess } from './switchyard.js';

const FLEET = new URL('./monitor-fleet.ts', import.meta.url).pathname;

/** The routing account of the leg's Switchyard (any 32 hex characters). */
export const MGMT_ACCOUNT = '0b0e0c0d0b0e0c0d0b0e0c0d0b0e0c0d';
/** Seconds between checks (SPEC §12: 10 s). */
export const MGMT_INTERVAL_S = 10;
const RETRIES = 2;
/** Beyond interval × (1 + jitter), what a check may lag (the round itself, a busy event loop). */
const GAP_SLACK_MS = 1_000;
const JITTER = 0.1; // health/scheduler.ts's default
const PAGE = 1000; // api/pagination.ts MAX_PER_PAGE
const FLEET_PORTS = 4;

export interface MgmtPlan {
  id: string;
  pools: number;
  originsPerPool: number;
  windowSeconds: number;
  listRequests: number;
  workDir: string;
  compiledCli?: string;
  /** `--profile DIR`: the leg's Switchyard runs with --cpu-prof too. */
  profileDir?: string;
  log: (line: string) => void;
}

interface FleetCounts {
  counts: number[];
  max_gap_ms: number[];
  since_last_ms: number[];
  unknown: number;
}

class Fleet {
  readonly #child: Child;
  readonly ports: number[];

  private constructor(child: Child, ports: number[]) {
    this.#child = child;
    this.ports = ports;
  }

  static async start(origins: number): Promise<Fleet> {
    const child = new Child(
      'monitor fleet',
      process.execPath,
      ['--import', 'tsx', FLEET, JSON.stringify({ ports: FLEET_PORTS, origins })],
      { lines: true },
    );
    try {
      const line = await child.nextLine('FLEET ready', 30_000);
      const { ports } = JSON.parse(line.slice('FLEET ready '.length)) as { ports: number[] };
      return new Fleet(child, ports);
    } catch (err) {
      await child.stop();
      throw err;
    }
  }

  get pid(): number {
    return this.#child.pid;
  }

  address(index: number): string {
    return `http://127.0.0.1:${this.ports[index % this.ports.length]}/o/${index}`;
  }

  async #get<T>(path: string): Promise<T> {
    const response = await fetch(`http://127.0.0.1:${this.ports[0]}${path}`, { signal: AbortSignal.timeout(10_000) });
    return (await response.json()) as T;
  }

  reset(): Promise<unknown> {
    return this.#get('/fleet/reset');
  }

  counts(): Promise<FleetCounts> {
    return this.#get('/fleet/counts');
  }

  stop(): Promise<void> {
    return this.#child.stop();
  }
}

/** The leg's plan from the run's options (full: 30 s window, 200 listings; --quick: 12 s, 30). */
export function mgmtPlan(
  id: string,
  options: BenchOptions,
  workDir: string,
  compiledCli: string | undefined,
  log: (line: string) => void,
): MgmtPlan {
  return {
    id,
    pools: options.mgmtPools,
    originsPerPool: 10,
    windowSeconds: options.mgmtSeconds,
    listRequests: options.quick ? 30 : 200,
    workDir,
    log,
    ...(compiledCli === undefined ? {} : { compiledCli }),
    ...(options.profileDir === undefined ? {} : { profileDir: options.profileDir }),
  };
}

/** The leg's Switchyard config keys: the account, its pools with inline monitors, and limits that fit them. */
export function mgmtConfig(plan: Pick<MgmtPlan, 'pools' | 'originsPerPool'>, address: (i: number) => string) {
  const pools = Array.from({ length: plan.pools }, (_, p) => ({
    name: `bench-pool-${p}`,
    origins: Array.from({ length: plan.originsPerPool }, (_, o) => ({
      name: `origin-${o}`,
      address: address(p * plan.originsPerPool + o),
    })),
    monitor: { type: 'jsonrpc', interval: MGMT_INTERVAL_S, retries: RETRIES, timeout: 5 },
  }));
  const probes = (plan.pools * plan.originsPerPool * (RETRIES + 1)) / MGMT_INTERVAL_S;
  return {
    account_id: MGMT_ACCOUNT,
    pools,
    limits: { probes_per_second: Math.ceil(probes) + 1, max_pools_per_account: Math.max(1000, plan.pools) },
  };
}

/** Is every origin checked within its interval? undefined when so, else what was wrong. */
export function coverageProblem(counts: FleetCounts, origins: number): string | undefined {
  const limit = MGMT_INTERVAL_S * 1000 * (1 + JITTER) + GAP_SLACK_MS;
  let never = 0;
  let late = 0;
  for (let i = 0; i < origins; i++) {
    if ((counts.counts[i] ?? 0) === 0) never += 1;
    else if (Math.max(counts.max_gap_ms[i] ?? 0, counts.since_last_ms[i] ?? 0) > limit) late += 1;
  }
  if (never === 0 && late === 0) return undefined;
  return `${never} of ${origins} origins not checked in the window, ${late} with a gap over ${limit} ms`;
}

export async function runMgmtLeg(plan: MgmtPlan): Promise<LegResult> {
  const origins = plan.pools * plan.originsPerPool;
  const base: LegResult = {
    id: plan.id,
    scenario: 'mgmt',
    target: 'switchyard',
    title: 'management API',
    status: 'ok',
    connections: 1,
    request_bytes: 0,
    response_bytes: 0,
  };
  let fleet: Fleet | undefined;
  let switchyard: SwitchyardProcess | undefined;
  try {
    fleet = await Fleet.start(origins);
    plan.log(
      `bench: ${plan.id}: fleet pid ${fleet.pid} on ports ${fleet.ports.join(', ')}; ${plan.pools} pools × ${plan.originsPerPool} origins…`,
    );
    const fleetRef = fleet;
    switchyard = await SwitchyardProcess.start({
      workDir: plan.workDir,
      name: 'switchyard-mgmt',
      routes: {},
      config: mgmtConfig(plan, (i) => fleetRef.address(i)),
      tokenAccount: MGMT_ACCOUNT,
      ...(plan.compiledCli === undefined ? {} : { compiledCli: plan.compiledCli }),
      ...(plan.profileDir === undefined ? {} : { profileDir: plan.profileDir }),
    });
    const started = performance.now();
    plan.log(`bench: ${plan.id}: switchyard pid ${switchyard.pid}; waiting for every origin's first check…`);

    // Steady state: every origin checked once (the first rounds are spread over one interval), then one more interval.
    const intervalMs = MGMT_INTERVAL_S * 1000;
    // When they never all are, the window is still measured (the figures say how far off it is) and the leg fails.
    const firstDeadline = performance.now() + 3 * intervalMs + 30_000;
    let neverChecked: string | undefined;
    for (;;) {
      const seen = (await fleet.counts()).counts.filter((n) => n > 0).length;
      if (seen === origins) break;
      if (performance.now() > firstDeadline) {
        neverChecked = `only ${seen} of ${origins} origins checked within ${Math.round((performance.now() - started) / 1000)} s of the start`;
        plan.log(`bench: ${plan.id}: ${neverChecked}; measuring anyway`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    if (neverChecked === undefined) await new Promise((resolve) => setTimeout(resolve, intervalMs));

    plan.log(`bench: ${plan.id}: ${plan.windowSeconds} s of monitoring, no traffic…`);
    await fleet.reset();
    const t0 = performance.now();
    const cpu0 = cpuSample(switchyard.pid);
    await new Promise((resolve) => setTimeout(resolve, plan.windowSeconds * 1000));
    const cpu1 = cpuSample(switchyard.pid);
    const t1 = performance.now();
    const counts = await fleet.counts();
    const memory = memorySample(switchyard.pid);
    const rss = memory.rssBytes;
    const windowS = (t1 - t0) / 1000;
    const cpuMicros = cpu1.cpuMicros - cpu0.cpuMicros;
    const checks = counts.counts.reduce((sum, n) => sum + n, 0);
    const gaps = counts.max_gap_ms.map((gap, i) => Math.max(gap, counts.since_last_ms[i] ?? 0));
    const gapSpread = spread(gaps);
    const monitoring: MgmtFigures['monitoring'] = {
      window_s: round(windowS, 2),
      cpu_share_of_core: round(cpuMicros / (windowS * 1_000_000), 4),
      ...(cpuMicros > 0 ? { cpu_system_share: round((cpu1.systemMicros - cpu0.systemMicros) / cpuMicros, 3) } : {}),
      cpu_us_per_check: checks > 0 ? round(cpuMicros / checks, 1) : 0,
      checks,
      checks_per_s: round(checks / windowS, 1),
      expected_checks_per_s: round(origins / MGMT_INTERVAL_S, 1),
      min_checks_per_origin: Math.min(...counts.counts.slice(0, origins)),
      max_gap_ms: gapSpread?.max ?? 0,
      p99_gap_ms: gapSpread?.p99 ?? 0,
      rss_bytes: rss,
    };
    const steadyAfter = round((t0 - started) / 1000, 1);
    const missed = coverageProblem(counts, origins);
    const coverage = neverChecked === undefined ? missed : `${neverChecked}; ${missed ?? 'then all were'}`;

    const list = await listPools(switchyard, plan);
    const figures: MgmtFigures = {
      pools: plan.pools,
      origins_per_pool: plan.originsPerPool,
      origins,
      monitor_type: 'jsonrpc',
      interval_s: MGMT_INTERVAL_S,
      retries: RETRIES,
      steady_after_s: steadyAfter,
      list: typeof list === 'string' ? emptyList() : list,
      monitoring,
    };
    const result: LegResult = {
      ...base,
      requests: figures.list.requests,
      response_bytes: figures.list.answer_bytes,
      // req/s: listings per second, one after another.
      ...(typeof list === 'string' ? {} : { latency_ms: list.ms, rps: round(1000 / list.ms.mean, 1) }),
      rss_before_bytes: rss,
      peak_rss_bytes: memory.peakRssBytes,
      mgmt: figures,
    };
    if (coverage !== undefined) return { ...result, status: 'failed', reason: `monitoring: ${coverage}` };
    if (typeof list === 'string') return { ...result, status: 'failed', reason: `listing: ${list}` };
    if (counts.unknown > 0) {
      return { ...result, status: 'failed', reason: `${counts.unknown} requests to the fleet named no origin` };
    }
    return result;
  } catch (err) {
    const tail = switchyard?.logTail ?? '';
    return {
      ...base,
      status: 'failed',
      reason: `${(err as Error).message}${tail ? `; log: ${tail.slice(-300)}` : ''}`,
    };
  } finally {
    await switchyard?.stop();
    await fleet?.stop();
  }
}

function emptyList(): MgmtFigures['list'] {
  return { requests: 0, per_page: PAGE, pages: 0, answer_bytes: 0, ms: { p50: 0, p90: 0, p99: 0, mean: 0, max: 0 } };
}

/** One listing = every page of `per_page=1000`; returns its figures or what was wrong. */
async function listPools(
  switchyard: SwitchyardProcess,
  plan: Pick<MgmtPlan, 'pools' | 'listRequests'>,
): Promise<MgmtFigures['list'] | string> {
  const pages = Math.max(1, Math.ceil(plan.pools / PAGE));
  const headers = { authorization: `Bearer ${switchyard.token}` };
  const url = (page: number): string =>
    `${switchyard.apiUrl}/client/v4/accounts/${MGMT_ACCOUNT}/load_balancers/pools?per_page=${PAGE}&page=${page}`;
  let bytes = 0;
  const listing = async (check: boolean): Promise<string | undefined> => {
    let listed = 0;
    bytes = 0;
    for (let page = 1; page <= pages; page++) {
      const response = await fetch(url(page), { headers, signal: AbortSignal.timeout(30_000) });
      const text = await response.text();
      bytes += Buffer.byteLength(text);
      if (response.status !== 200) return `HTTP ${response.status}: ${text.slice(0, 300)}`;
      if (check) {
        const body = JSON.parse(text) as {
          success?: boolean;
          result?: unknown[];
          result_info?: { total_count?: number };
        };
        if (body.success !== true || body.result_info?.total_count !== plan.pools) {
          return `the listing says ${body.result_info?.total_count} pools, expected ${plan.pools}`;
        }
        listed += body.result?.length ?? 0;
      }
    }
    return check && listed !== plan.pools ? `${listed} pools listed, expected ${plan.pools}` : undefined;
  };
  const problem = await listing(true);
  if (problem !== undefined) return problem;
  for (let i = 0; i < 4; i++) await listing(false);
  const times: number[] = [];
  for (let i = 0; i < plan.listRequests; i++) {
    const start = performance.now();
    const wrong = await listing(false);
    times.push(performance.now() - start);
    if (wrong !== undefined) return wrong;
  }
  const ms = spread(times);
  if (ms === undefined) return 'no listing timed';
  return { requests: times.length, per_page: PAGE, pages, answer_bytes: bytes, ms: roundSpread(ms) };
}
