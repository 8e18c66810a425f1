/**
 * The routing legs (SPEC §17), each against a Switchyard of its own (same runtime as the run's, its own
 * config, ports and data dir) in front of the run's upstream nginx, driven by wrk as the other legs are
 * (legs.ts `runLeg`) with a lookup by hash (payloads.ts `lookup`: every origin may take it, see there):
 *   - `pool-size`: three networks, measured one after another — `one` (a pool of one origin), `64` (one
 *     pool of 64 origins) and `20pools` (a network of 20 pools of one origin, tried in order). Every
 *     origin is the upstream's /single (the 64 differ by a query string and share one connection pool),
 *     heads are polled once an hour, so only routing differs. SPEC §17: 64 origins and 20 pools each
 *     ≥ 0.9× one origin (report.ts targets; medians over repeated runs decide).
 *   - `degraded`: a pool of three origins, each a stall proxy in the bench process (stall-proxy.ts, seeded)
 *     in front of /single: `healthy` (none stalls), `nohedge` (one stalls 5 % of its calls for 300 ms)
 *     and `hedge` (the same, on a network with `hedge: {after: p90}`). Each leg warms up, then counts the
 *     calls its proxies get: `routing.origin_calls_per_request` − 1 is what hedging costs in extra
 *     origin calls (the chain tracker's head polls, 3 a second, are within it). SPEC §17: p99 with
 *     hedging ≤ 1.5× the p99 with three healthy origins.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LegResult, Scenario } from './legs.js';
import { runLeg, skippedLeg } from './legs.js';
import type { BenchOptions } from './options.js';
import { lookup } from './payloads.js';
import { StallProxy } from './stall-proxy.js';
import { SwitchyardProcess } from './switchyard.js';
import { runWrk } from './wrk.js';

export interface RoutingLegContext {
  /** The upstream nginx, `http://127.0.0.1:port`, and its PID. */
  readonly upstream: { url: string; pid: number } | undefined;
  readonly wrk: string | undefined;
  readonly workDir: string;
  readonly options: BenchOptions;
  readonly compiledCli: string | undefined;
  readonly log: (line: string) => void;
}

/** What the degraded legs add to a leg's result. */
export interface RoutingFigures {
  /** Calls the origins got per client request (1 = no extra call). */
  origin_calls_per_request?: number;
  stalling_share?: number;
  stall_ms?: number;
  hedge?: string;
}

const STALL_SHARE = 0.05;
const STALL_MS = 300;

export function runPoolSizeLegs(context: RoutingLegContext): Promise<LegResult[]> {
  const up = context.upstream?.url ?? '';
  const networks: Record<string, unknown> = {
    one: { chain_id: 900_101, pools: ['one'], head_poll_interval: '1h' },
    '64': { chain_id: 900_102, pools: ['pool64'], head_poll_interval: '1h' },
    '20pools': {
      chain_id: 900_103,
      pools: Array.from({ length: 20 }, (_, i) => `p20-${i}`),
      head_poll_interval: '1h',
    },
  };
  const pools: unknown[] = [
    { name: 'one', origins: [{ name: 'o', address: `${up}/single` }] },
    {
      name: 'pool64',
      origins: Array.from({ length: 64 }, (_, i) => ({ name: `o${i}`, address: `${up}/single?o=${i}` })),
    },
    ...Array.from({ length: 20 }, (_, i) => ({
      name: `p20-${i}`,
      origins: [{ name: 'o', address: `${up}/single?p=${i}` }],
    })),
  ];
  const titles: Record<string, string> = {
    one: 'pool size: one origin',
    '64': 'pool size: a pool of 64 origins',
    '20pools': 'pool size: a network of 20 pools',
  };
  // In this order: an integer-like key ('64') would come first in Object.keys.
  return runLegs(context, 'pool-size', { networks, pools }, ['one', '64', '20pools'], titles);
}

export async function runDegradedLegs(context: RoutingLegContext): Promise<LegResult[]> {
  const target = `${context.upstream?.url ?? ''}/single`;
  const proxies =
    context.upstream === undefined ? [] : await Promise.all([1, 2, 3].map((seed) => StallProxy.start(target, seed)));
  const origins = proxies.map((proxy, i) => ({ name: `o${i}`, address: proxy.url }));
  const config = {
    networks: {
      plain: { chain_id: 900_201, pools: ['three'] },
      hedged: { chain_id: 900_202, pools: ['three'], hedge: { after: 'p90' } },
    },
    pools: [{ name: 'three', origins }],
  };
  const variants: Record<string, { network: string; title: string; stalls: boolean; hedge?: string }> = {
    healthy: { network: 'plain', title: 'degraded: three healthy origins', stalls: false },
    nohedge: { network: 'plain', title: 'degraded: one stalls 5 % for 300 ms, no hedging', stalls: true },
    hedge: { network: 'hedged', title: 'degraded: one stalls, hedge after p90', stalls: true, hedge: 'p90' },
  };
  try {
    return await runLegs(context, 'degraded', config, Object.keys(variants), {}, async (name, run) => {
      const variant = variants[name] as (typeof variants)[string];
      (proxies[2] as StallProxy).stall = variant.stalls ? { share: STALL_SHARE, ms: STALL_MS } : { share: 0, ms: 0 };
      // Counted from the measured load on, each leg from the same seeded draws.
      const result = await run(variant.network, () => {
        for (const [i, proxy] of proxies.entries()) proxy.reset(i + 1);
      });
      const calls = proxies.reduce((sum, proxy) => sum + proxy.calls, 0);
      const figures: RoutingFigures = {
        ...(result.requests ? { origin_calls_per_request: Math.round((calls / result.requests) * 1000) / 1000 } : {}),
        stalling_share: variant.stalls ? STALL_SHARE : 0,
        stall_ms: variant.stalls ? STALL_MS : 0,
        ...(variant.hedge === undefined ? {} : { hedge: variant.hedge }),
      };
      return { ...result, title: variant.title, routing: figures };
    });
  } finally {
    await Promise.all(proxies.map((proxy) => proxy.close()));
  }
}

/** Measures a leg on `network` (after its warm-up; `ready` runs between the two). */
type Measure = (network: string, ready?: () => void) => Promise<LegResult>;

/**
 * Starts the scenario's Switchyard, runs one leg per name (`around` may set things up around each, e.g.
 * the stall proxies), stops it. Without the upstream, wrk or the CLI every leg is skipped with the reason.
 */
async function runLegs(
  context: RoutingLegContext,
  scenario: Scenario,
  config: { networks: Record<string, unknown>; pools: unknown[] },
  names: readonly string[],
  titles: Record<string, string>,
  around?: (name: string, run: Measure) => Promise<LegResult>,
): Promise<LegResult[]> {
  const { options, log } = context;
  const chosen = names.filter(
    (name) => options.only.length === 0 || options.only.some((f) => `${scenario}-${name}`.includes(f)),
  );
  const shape = (name: string) => ({
    id: `${scenario}-${name}`,
    scenario,
    target: 'switchyard' as const,
    connections: options.connections,
    exchange: lookup,
  });
  const missing =
    context.upstream === undefined ? 'nginx unavailable' : context.wrk === undefined ? 'wrk unavailable' : undefined;
  if (missing !== undefined) return chosen.map((name) => skippedLeg(shape(name), missing));
  let server: SwitchyardProcess;
  try {
    server = await SwitchyardProcess.start({
      workDir: context.workDir,
      routes: {},
      name: `switchyard-${scenario}`,
      config,
      ...(context.compiledCli === undefined ? {} : { compiledCli: context.compiledCli }),
    });
  } catch (err) {
    return chosen.map((name) => ({ ...skippedLeg(shape(name), (err as Error).message), status: 'failed' as const }));
  }
  const results: LegResult[] = [];
  try {
    for (const name of chosen) {
      const measure: Measure = async (network) => {
        const plan = {
          ...shape(name),
          url: `${server.gatewayUrl}/v1/${network}`,
          serverPid: server.pid,
          upstreamPid: (context.upstream as { pid: number }).pid,
        };
        log(`bench: ${plan.id}: ${options.seconds} s, ${plan.connections} connection(s)…`);
        return runLeg(plan, {
          wrk: context.wrk as string,
          workDir: context.workDir,
          seconds: options.seconds,
          warmupSeconds: 0,
          threads: options.threads,
        }).catch((err: Error): LegResult => ({ ...skippedLeg(plan, err.message), status: 'failed' }));
      };
      const warmed: Measure = async (network, ready) => {
        await warmUp(context, `${server.gatewayUrl}/v1/${network}`, name);
        ready?.();
        return measure(network);
      };
      const result =
        around === undefined ? { ...(await warmed(name)), title: titles[name] ?? name } : await around(name, warmed);
      log(
        `bench: ${result.id}: ${result.status}${result.rps === undefined ? '' : `, ${result.rps} req/s`}${result.reason ? ` (${result.reason})` : ''}`,
      );
      results.push(result);
    }
  } finally {
    await server.stop();
  }
  return results;
}

/** Unmeasured load before a leg (lets V8 optimise, fills the connection pools and the score windows). */
async function warmUp(context: RoutingLegContext, url: string, name: string): Promise<void> {
  const seconds = context.options.warmupSeconds;
  if (seconds <= 0 || context.wrk === undefined) return;
  const bodyFile = join(context.workDir, `routing-${name}.warmup.json`);
  writeFileSync(bodyFile, lookup.request);
  await runWrk({
    binary: context.wrk,
    url,
    bodyFile,
    connections: context.options.connections,
    threads: Math.min(context.options.threads, context.options.connections),
    seconds,
  });
}
