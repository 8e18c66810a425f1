/**
 * One benchmark run, start to finish: find (or install) nginx and wrk, start the upstream nginx, the
 * reference nginx proxy, Switchyard (spawned CLI), optionally anvil, and — when the fan-out leg is
 * selected — the fan-out process (its origin must be in Switchyard's config), run every leg one after
 * another, stop everything by PID, and write `<out>/<date>.json` plus `<out>/<date>.md`. The management
 * leg (`mgmt`, last) starts and stops its own Switchyard and fleet of origins (mgmt-leg.ts).
 *
 * Legs whose prerequisites are missing are recorded as `skipped` with the reason (only allowed in
 * `--quick`; a full run refuses to start without its tools). A leg whose answer is wrong or which saw
 * request errors is `failed`, and the run's exit code says so.
 *
 * With `--workers N` a second Switchyard with `gateway.workers: N` (same networks and origins, its own
 * ports and data dir) runs beside the first, and each HTTP Switchyard leg (not the WebSocket ones) runs
 * against both, one right after the other: first the default one (workers: 1) in the first scenario
 * (`--workers-first`: the other), then the other way round in the next, and so on, so neither always
 * runs second.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child } from './child.js';
import { type LegPlan, type LegResult, runLeg, type Scenario, skippedLeg, type Target } from './legs.js';
import { mgmtPlan, runMgmtLeg } from './mgmt-leg.js';
import { Nginx, proxyConfig, upstreamConfig } from './nginx.js';
import type { BenchOptions } from './options.js';
import { batch, cacheable, type Exchange, largeLogs, RESULTS, single } from './payloads.js';
import { freePort } from './ports.js';
import { addRatios, type BenchReport, checkTargets, markdown } from './report.js';
import { runDegradedLegs, runPoolSizeLegs } from './routing-legs.js';
import { buildCli, REPO_ROOT, type Routes, SwitchyardProcess } from './switchyard.js';
import { ensureTools, INSTALL_HINT } from './tools.js';
import { runVerifyLegs } from './verify-leg.js';
import { FANOUT_CHAIN_ID, FANOUT_NETWORK, FanoutProcess, runWsLeg, WS_READ_NETWORK } from './ws-legs.js';

export interface BenchOutcome {
  report: BenchReport;
  jsonFile: string;
  markdownFile: string;
  failed: boolean;
}

/** How Switchyard runs in this run: said in the report; the compiled CLI also serves the mgmt leg's own instance. */
interface Runtime {
  value: string;
  compiledCli?: string;
}

interface Running {
  upstream?: Nginx;
  proxy?: Nginx;
  switchyard?: SwitchyardProcess;
  /** The second Switchyard of `--workers N`, with `gateway.workers: N`. */
  switchyardWorkers?: SwitchyardProcess;
  anvil?: { child: Child; url: string };
  fanout?: FanoutProcess;
}

/** The scenarios wrk drives over HTTP against the nginx upstream. */
type HttpScenario = Exclude<Scenario, 'anvil' | 'wsread' | 'wsfanout' | 'mgmt' | 'pool-size' | 'degraded' | 'verify'>;

/**
 * Where each scenario goes: the upstream path the direct and nginx legs POST to, the Switchyard network
 * name, and the upstream path that network's origin points at. For the batch all three send the batch
 * up whole and the upstream answers it from a file: Switchyard numbers the calls of an upstream batch
 * 1..n, which are the ids the file answers.
 */
const ROUTE: Record<HttpScenario, { path: string; network: string; origin: string }> = {
  single: { path: '/single', network: 'single', origin: '/single' },
  // Each Switchyard leg has its own network (and pool), so nothing one leg leaves behind in the
  // gateway's routing state (e.g. a passive ejection) carries over to the next.
  light: { path: '/single', network: 'light', origin: '/single' },
  cached: { path: '/cached', network: 'cached', origin: '/cached' },
  batch100: { path: '/batch.json', network: 'batch', origin: '/batch.json' },
  large10mb: { path: '/large', network: 'large', origin: '/large' },
};

const LEG_ORDER: Array<[Scenario, Target[]]> = [
  ['single', ['direct', 'nginx', 'switchyard']],
  ['cached', ['switchyard']],
  ['light', ['direct', 'nginx', 'switchyard']],
  ['batch100', ['direct', 'nginx', 'switchyard']],
  ['large10mb', ['direct', 'nginx', 'switchyard']],
  ['anvil', ['direct', 'switchyard']],
  // The routing legs of SPEC §17, each with a Switchyard of its own (routing-legs.ts).
  ['pool-size', ['switchyard']],
  ['degraded', ['switchyard']],
  // SPEC §18: what a verified answer costs, against an anvil and a Switchyard of its own (verify-leg.ts).
  ['verify', ['switchyard']],
  // Last, so they leave the legs before them as they were (ws-legs.ts).
  ['wsread', ['switchyard']],
  ['wsfanout', ['switchyard']],
  // Its own Switchyard and fleet of origins, started and stopped within the leg (mgmt-leg.ts).
  ['mgmt', ['switchyard']],
];

function selected(id: string, options: BenchOptions): boolean {
  return options.only.length === 0 || options.only.some((f) => id.includes(f));
}

export async function runBench(options: BenchOptions, log: (line: string) => void): Promise<BenchOutcome> {
  const started = new Date();
  const notes: string[] = [];
  const tools = ensureTools({ install: options.install, log });
  if (tools.problems.length > 0) {
    if (!options.quick)
      throw new Error(`bench needs nginx and wrk: ${tools.problems.join(', ')}; install them ${INSTALL_HINT}`);
    notes.push(`SKIPPED legs: ${tools.problems.join(', ')}; install them ${INSTALL_HINT}`);
  }
  if (!SwitchyardProcess.cliAvailable()) notes.push('Switchyard CLI (src/cli/run.ts) not found: its legs are skipped');

  const large = largeLogs();
  const exchanges: Record<HttpScenario, Exchange> = {
    single,
    light: single,
    cached: cacheable,
    batch100: batch(100),
    large10mb: large,
  };
  const workDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const running: Running = {};
  const runtime: Runtime = { value: 'not started' };
  const distDir = join(REPO_ROOT, '.tmp', `bench-dist-${process.pid}`);
  const legs: LegResult[] = [];
  let pairs = 0; // scenarios whose Switchyard leg ran with both worker counts, for the alternating order
  try {
    await startServers(options, tools, exchanges, large.result, workDir, distDir, running, notes, runtime, log);
    for (const [scenario, targets] of LEG_ORDER) {
      const runs: Array<[Target, number | undefined]> = [];
      for (const target of targets) {
        const isWs = scenario === 'wsread' || scenario === 'wsfanout' || scenario === 'mgmt';
        if (target !== 'switchyard' || options.workers === undefined || isWs) {
          runs.push([target, undefined]);
          continue;
        }
        const both: Array<[Target, number | undefined]> = [
          [target, undefined],
          [target, options.workers],
        ];
        const chosen = both.filter(([, w]) => selected(legId(scenario, target, w), options));
        if (chosen.length === 2 && pairs++ % 2 === (options.workersFirst ? 0 : 1)) chosen.reverse();
        runs.push(...chosen);
      }
      if (scenario === 'verify') {
        if (options.only.length === 0 || options.only.some((f) => f.startsWith('verify') || 'verify'.includes(f))) {
          const context = { wrk: tools.wrk, workDir, options, compiledCli: runtime.compiledCli, log };
          legs.push(...(await runVerifyLegs(context)));
        }
        continue;
      }
      if (scenario === 'pool-size' || scenario === 'degraded') {
        // Several legs of their own (`pool-size-64`, …): selected by scenario here, by leg inside.
        if (options.only.length > 0 && !options.only.some((f) => f.startsWith(scenario) || scenario.includes(f))) {
          continue;
        }
        const upstream = running.upstream;
        const context = {
          upstream:
            upstream === undefined ? undefined : { url: `http://127.0.0.1:${upstream.port}`, pid: upstream.pid },
          wrk: tools.wrk,
          workDir,
          options,
          compiledCli: runtime.compiledCli,
          log,
        };
        legs.push(...(await (scenario === 'pool-size' ? runPoolSizeLegs : runDegradedLegs)(context)));
        continue;
      }
      for (const [target, workers] of runs) {
        const id = legId(scenario, target, workers);
        if (!selected(id, options)) continue;
        if (scenario === 'wsread' || scenario === 'wsfanout') {
          legs.push(await runWsLeg(id, scenario, options, running, log));
          continue;
        }
        if (scenario === 'mgmt') {
          const result = await runMgmtLeg(mgmtPlan(id, options, workDir, runtime.compiledCli, log));
          log(`bench: ${id}: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
          legs.push(result);
          continue;
        }
        const plan = await planLeg(id, scenario, target, options, exchanges, running, workers);
        if (typeof plan === 'string' || 'down' in plan) {
          const shape = { ...placeholder(id, scenario, target, options, exchanges), ...(workers ? { workers } : {}) };
          // A Switchyard that did not start fails its legs (exit 1): only missing tools or options skip.
          const leg =
            typeof plan === 'string'
              ? skippedLeg(shape, plan)
              : { ...skippedLeg(shape, plan.down), status: 'failed' as const };
          legs.push(leg);
          log(`bench: ${id}: ${leg.status} (${leg.reason})`);
          continue;
        }
        log(`bench: ${id}: ${options.seconds} s, ${plan.connections} connection(s)…`);
        const result = await runLeg(plan, {
          wrk: tools.wrk!,
          workDir,
          seconds: options.seconds,
          warmupSeconds: options.warmupSeconds,
          threads: options.threads,
        }).catch((err: Error): LegResult => ({ ...skippedLeg(plan, err.message), status: 'failed' }));
        log(
          `bench: ${id}: ${result.status}${result.rps === undefined ? '' : `, ${result.rps} req/s`}` +
            (result.reason ? ` (${result.reason})` : ''),
        );
        legs.push(result);
      }
    }
    const logTail = running.switchyard?.logTail ?? '';
    const failed = (many: boolean): boolean =>
      legs.some(
        (leg) => leg.status === 'failed' && leg.target === 'switchyard' && (leg.workers !== undefined) === many,
      );
    if (failed(false) && logTail !== '') {
      notes.push(`Switchyard's last log lines: ${logTail.split('\n').slice(-5).join(' ⏎ ')}`);
    }
    const workersTail = running.switchyardWorkers?.logTail ?? '';
    if (failed(true) && workersTail !== '') {
      notes.push(
        `The last log lines of Switchyard with workers: ${options.workers}: ${workersTail.split('\n').slice(-5).join(' ⏎ ')}`,
      );
    }
  } finally {
    // Reverse start order, each by its own PID.
    await running.switchyardWorkers?.stop();
    await running.switchyard?.stop();
    await running.fanout?.stop();
    await running.anvil?.child.stop();
    await running.proxy?.stop();
    await running.upstream?.stop();
    rmSync(workDir, { recursive: true, force: true, maxRetries: 3 });
    rmSync(distDir, { recursive: true, force: true, maxRetries: 3 });
  }

  const withRatios = addRatios(legs);
  const report: BenchReport = {
    schema: 'switchyard-bench/1',
    started_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    machine: machine(tools),
    settings: {
      seconds: options.seconds,
      warmup_seconds: options.warmupSeconds,
      connections: options.connections,
      light_connections: 1,
      large_connections: 1,
      threads: options.threads,
      ws_inflight: options.wsInflight,
      ws_fanout_connections: options.wsConnections,
      ws_fanout_heads: options.wsHeads,
      mgmt_pools: options.mgmtPools,
      mgmt_window_seconds: options.mgmtSeconds,
      switchyard_runtime: runtime.value,
      workers: options.workers ?? 1,
      ...(options.workers === undefined ? {} : { workers_first: options.workersFirst }),
    },
    notes,
    legs: withRatios,
    targets: checkTargets(withRatios),
  };
  mkdirSync(options.outDir, { recursive: true });
  const stamp = started
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
  const jsonFile = join(options.outDir, `${stamp}.json`);
  const markdownFile = join(options.outDir, `${stamp}.md`);
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(markdownFile, markdown(report));
  return { report, jsonFile, markdownFile, failed: legs.some((leg) => leg.status === 'failed') };
}

async function startServers(
  options: BenchOptions,
  tools: ReturnType<typeof ensureTools>,
  exchanges: Record<HttpScenario, Exchange>,
  largeResult: string,
  workDir: string,
  distDir: string,
  running: Running,
  notes: string[],
  runtime: Runtime,
  log: (line: string) => void,
): Promise<void> {
  if (tools.nginx !== undefined) {
    const upstreamPort = await freePort();
    const upstreamPrefix = join(workDir, 'upstream');
    running.upstream = await Nginx.start({
      binary: tools.nginx,
      name: 'upstream nginx',
      prefix: upstreamPrefix,
      port: upstreamPort,
      config: upstreamConfig(upstreamPrefix, upstreamPort, {
        echo: { '/single': RESULTS.blockNumber, '/cached': RESULTS.chainId, '/balance': RESULTS.balance },
        echoFile: { '/large': 'large-result.json' },
        files: { '/batch.json': 'batch.json' },
      }),
      files: { 'batch.json': exchanges.batch100.response, 'large-result.json': largeResult },
    });
    const proxyPort = await freePort();
    const proxyPrefix = join(workDir, 'proxy');
    running.proxy = await Nginx.start({
      binary: tools.nginx,
      name: 'proxy nginx',
      prefix: proxyPrefix,
      port: proxyPort,
      config: proxyConfig(proxyPrefix, proxyPort, upstreamPort),
    });
    log(`bench: upstream nginx pid ${running.upstream.pid}, proxy nginx pid ${running.proxy.pid}`);
  }
  if (options.anvil && tools.wrk !== undefined) {
    const port = await freePort();
    const binary = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/bin/anvil');
    const child = new Child('anvil', binary, ['--host', '127.0.0.1', '--port', String(port), '--quiet']);
    running.anvil = { child, url: `http://127.0.0.1:${port}/` };
    await child.waitForPort(port, 30_000);
  }
  if (SwitchyardProcess.cliAvailable() && running.upstream !== undefined) {
    let compiledCli: string | undefined;
    if (options.build) {
      log('bench: compiling Switchyard (tsconfig.build.json) to run it as installed…');
      // Inside the checkout (.tmp/ is ignored by git) so the build resolves node_modules like an install.
      compiledCli = buildCli(distDir, log);
      if (compiledCli === undefined) notes.push('building Switchyard failed: its legs ran from the sources under tsx');
    }
    runtime.value = compiledCli === undefined ? 'sources under tsx' : 'compiled (tsconfig.build.json)';
    if (compiledCli !== undefined) runtime.compiledCli = compiledCli;
    const up = `http://127.0.0.1:${running.upstream.port}`;
    const routes: Routes = {};
    for (const route of Object.values(ROUTE)) routes[route.network] = `${up}${route.origin}`;
    if (running.anvil !== undefined) routes.anvil = running.anvil.url;
    // The WebSocket legs' networks exist only when their legs run, so other runs' gateway is as before.
    if (selected('wsread-switchyard', options)) routes[WS_READ_NETWORK] = `${up}${ROUTE.single.origin}`;
    if (selected('wsfanout-switchyard', options)) {
      try {
        running.fanout = await FanoutProcess.start(FANOUT_CHAIN_ID);
        // Heads enter only through the origin's newHeads push: the one poll at start gives the first head.
        routes[FANOUT_NETWORK] = {
          address: running.fanout.url,
          ws_address: running.fanout.wsUrl,
          head_poll_interval: '1h',
        };
        log(`bench: fan-out process pid ${running.fanout.pid} (origin at ${running.fanout.url})`);
      } catch (err) {
        notes.push(`the fan-out process did not start: ${(err as Error).message}`);
      }
    }
    try {
      running.switchyard = await SwitchyardProcess.start({
        workDir,
        routes,
        // The fan-out leg reads RSS right after full garbage collections, asked through the inspector.
        ...(running.fanout === undefined ? {} : { inspectPort: await freePort() }),
        ...(options.profileDir === undefined ? {} : { profileDir: options.profileDir }),
        ...(compiledCli === undefined ? {} : { compiledCli }),
      });
      log(`bench: switchyard pid ${running.switchyard.pid} at ${running.switchyard.gatewayUrl}`);
    } catch (err) {
      notes.push(`Switchyard did not start: ${(err as Error).message}`);
    }
    if (options.workers !== undefined) {
      // The same networks but the WebSocket legs' (which run against the first one only).
      const httpRoutes = { ...routes };
      delete httpRoutes[WS_READ_NETWORK];
      delete httpRoutes[FANOUT_NETWORK];
      try {
        running.switchyardWorkers = await SwitchyardProcess.start({
          workDir,
          routes: httpRoutes,
          workers: options.workers,
          name: `switchyard-workers-${options.workers}`,
          ...(options.profileDir === undefined ? {} : { profileDir: options.profileDir }),
          ...(compiledCli === undefined ? {} : { compiledCli }),
        });
        log(
          `bench: switchyard with workers: ${options.workers}, control pid ${running.switchyardWorkers.pid} at ${running.switchyardWorkers.gatewayUrl}`,
        );
      } catch (err) {
        notes.push(`Switchyard with workers: ${options.workers} did not start: ${(err as Error).message}`);
      }
    }
  }
}

/** A leg that cannot run because its Switchyard did not start (the run's notes say why): a failure. */
interface SwitchyardDown {
  readonly down: string;
}

/** `single-switchyard`, or with a worker count `single-switchyard-w2`. */
function legId(scenario: Scenario, target: Target, workers: number | undefined): string {
  return workers === undefined ? `${scenario}-${target}` : `${scenario}-${target}-w${workers}`;
}

async function planLeg(
  id: string,
  scenario: Scenario,
  target: Target,
  options: BenchOptions,
  exchanges: Record<HttpScenario, Exchange>,
  running: Running,
  workers?: number,
): Promise<LegPlan | SwitchyardDown | string> {
  const connections = connectionsFor(scenario, options);
  const { upstream, proxy, anvil } = running;
  const switchyard = workers === undefined ? running.switchyard : running.switchyardWorkers;
  const notRunning: SwitchyardDown = {
    down: workers === undefined ? 'Switchyard not running' : `Switchyard with workers: ${workers} not running`,
  };
  const many = workers === undefined ? {} : { workers };
  if (scenario === 'anvil') {
    if (anvil === undefined) return options.anvil ? 'anvil or wrk unavailable' : '--no-anvil';
    const request = single.request;
    // anvil's answer is whatever it is now; direct and proxied must agree byte for byte.
    const response = await (
      await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request })
    ).text();
    const exchange = { request, response };
    if (target === 'direct')
      return { id, scenario, target, url: anvil.url, exchange, connections, serverPid: anvil.child.pid };
    if (switchyard === undefined) return notRunning;
    const url = `${switchyard.gatewayUrl}/v1/anvil`;
    return {
      ...many,
      id,
      scenario,
      target,
      url,
      exchange,
      connections,
      serverPid: switchyard.pid,
      upstreamPid: anvil.child.pid,
    };
  }
  if (scenario === 'wsread' || scenario === 'wsfanout') return 'driven by ws-legs.ts';
  if (scenario === 'mgmt') return 'driven by mgmt-leg.ts';
  if (scenario === 'pool-size' || scenario === 'degraded') return 'driven by routing-legs.ts';
  if (scenario === 'verify') return 'driven by verify-leg.ts';
  if (upstream === undefined || proxy === undefined) return 'nginx unavailable';
  const exchange = exchanges[scenario];
  const route = ROUTE[scenario];
  const common = { id, scenario, target, exchange, connections };
  if (target === 'direct') {
    return { ...common, url: `http://127.0.0.1:${upstream.port}${route.path}`, serverPid: upstream.pid };
  }
  if (target === 'nginx') {
    const url = `http://127.0.0.1:${proxy.port}${route.path}`;
    return { ...common, url, serverPid: proxy.pid, upstreamPid: upstream.pid };
  }
  if (switchyard === undefined) return notRunning;
  const url = `${switchyard.gatewayUrl}/v1/${route.network}`;
  return { ...common, ...many, url, serverPid: switchyard.pid, upstreamPid: upstream.pid };
}

function connectionsFor(scenario: Scenario, options: BenchOptions): number {
  if (scenario === 'light' || scenario === 'large10mb') return 1;
  if (scenario === 'anvil') return Math.min(8, options.connections);
  return options.connections;
}

function placeholder(
  id: string,
  scenario: Scenario,
  target: Target,
  options: BenchOptions,
  exchanges: Record<HttpScenario, Exchange>,
): Pick<LegPlan, 'id' | 'scenario' | 'target' | 'connections' | 'exchange'> {
  const exchange =
    scenario === 'anvil' ||
    scenario === 'wsread' ||
    scenario === 'wsfanout' ||
    scenario === 'mgmt' ||
    scenario === 'pool-size' ||
    scenario === 'degraded' ||
    scenario === 'verify'
      ? { request: single.request, response: '' }
      : exchanges[scenario];
  return { id, scenario, target, connections: connectionsFor(scenario, options), exchange };
}

function machine(tools: ReturnType<typeof ensureTools>): Record<string, unknown> {
  const version = (binary: string | undefined, args: string[]): string | undefined => {
    if (binary === undefined) return undefined;
    const out = spawnSync(binary, args, { encoding: 'utf8', timeout: 10_000 });
    return `${out.stdout ?? ''}${out.stderr ?? ''}`.split('\n')[0]?.trim();
  };
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    load_average: loadavg().map((n) => Math.round(n * 100) / 100),
    nginx: version(tools.nginx, ['-v']),
    wrk: version(tools.wrk, ['-v']),
  };
}
