/**
 * The WebSocket fan-out leg (`wsfanout`, issue 16): `connections` WebSockets subscribed to newHeads on
 * Switchyard's `fanout` network, whose origin is the fan-out process (ws-fanout-client.ts: origin and
 * clients in one process, one clock). The gateway's RSS is read before the connections open and again
 * once they are all subscribed and have been idle `idleMs`, each time right after a full garbage
 * collection asked through the gateway's inspector (inspector.ts; when it has one): the difference over
 * the connection count is the RSS per idle connection. Then `warmupHeads` + `heads` new heads; for each measured head the time
 * from its push to the gateway until the last client has it. Every delivery is checked byte for byte;
 * a missing, wrong or duplicated delivery, or a connection the gateway closed, fails the leg.
 * Docs: docs/benchmarks.md, "WebSocket legs of issue 16".
 */
import { fileURLToPath } from 'node:url';
import { Child } from './child.js';
import { collectGarbage } from './inspector.js';
import type { LegResult } from './legs.js';
import { freePort } from './ports.js';
import { memorySample, resetPeak } from './procstat.js';
import { round, type Spread, systemShare } from './stats.js';

const FANOUT_CLIENT = fileURLToPath(new URL('./ws-fanout-client.ts', import.meta.url));

export interface FanoutOutcome {
  connections: number;
  heads: number;
  warmup_heads: number;
  notification_bytes: number;
  last_delivery_ms?: Spread;
  first_delivery_ms?: Spread;
  median_delivery_ms?: Spread;
  per_head: Array<{ number: number; first_ms: number; median_ms: number; last_ms: number }>;
  missing: number;
  wrong: number;
  extra: number;
  closed_early: number;
  samples: string[];
  cpu_us: Record<string, number>;
  client_cpu_us: number;
}

/** What the fan-out leg adds to its LegResult. */
export interface FanoutFigures extends Omit<FanoutOutcome, 'cpu_us' | 'client_cpu_us' | 'samples'> {
  subscribe_seconds: number;
  idle_ms: number;
  /** Both RSS readings came right after a full garbage collection of the gateway (through its inspector). */
  rss_after_full_gc: boolean;
  rss_before_connections_bytes: number;
  rss_idle_bytes: number;
  rss_per_idle_connection_bytes: number;
  gateway_cpu_ms_per_head: number;
  client_cpu_ms_per_head: number;
  client_rss_bytes: number;
}

/** The fan-out process (origin + clients), started before Switchyard so its address can be configured. */
export class FanoutProcess {
  readonly port: number;
  readonly #child: Child;

  private constructor(child: Child, port: number) {
    this.#child = child;
    this.port = port;
  }

  static async start(chainId: number): Promise<FanoutProcess> {
    const port = await freePort();
    const child = new Child(
      'fan-out process',
      process.execPath,
      ['--import', 'tsx', FANOUT_CLIENT, JSON.stringify({ port, chainId })],
      { lines: true },
    );
    try {
      await child.nextLine('FANOUT ready', 30_000);
    } catch (err) {
      await child.stop();
      throw err;
    }
    return new FanoutProcess(child, port);
  }

  get pid(): number {
    return this.#child.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/`;
  }

  /** Sends one command and returns its answer's JSON; an `error` answer rejects. */
  async command<T>(verb: string, body: unknown, timeoutMs: number): Promise<T> {
    this.#child.writeLine(`${verb} ${JSON.stringify(body)}`);
    const line = await this.#child.nextLine('FANOUT ', timeoutMs);
    const rest = line.slice('FANOUT '.length);
    const space = rest.indexOf(' ');
    const answered = rest.slice(0, space);
    const json = JSON.parse(rest.slice(space + 1)) as T & { message?: string };
    if (answered !== verb) throw new Error(`fan-out process: ${verb} failed: ${json.message ?? rest}`);
    return json;
  }

  stop(): Promise<void> {
    return this.#child.stop();
  }
}

export interface FanoutPlan {
  id: string;
  url: string;
  connections: number;
  heads: number;
  warmupHeads: number;
  /** ms between a head's last delivery and the next head */
  gapMs: number;
  /** ms the connections sit idle before the gateway's RSS is read */
  idleMs: number;
  serverPid: number;
  /** The gateway's inspector port: a full GC before each RSS reading (without it, RSS includes garbage). */
  inspectPort?: number;
}

export async function runFanoutLeg(plan: FanoutPlan, fanout: FanoutProcess): Promise<LegResult> {
  const result: LegResult = {
    id: plan.id,
    scenario: 'wsfanout',
    target: 'switchyard',
    title: 'WebSocket newHeads fan-out',
    status: 'ok',
    connections: plan.connections,
    request_bytes: Buffer.byteLength('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}'),
    response_bytes: 0,
  };
  const collect = async (): Promise<boolean> => {
    if (plan.inspectPort === undefined) return false;
    await collectGarbage(plan.inspectPort);
    return true;
  };
  await collect();
  const before = memorySample(plan.serverPid);
  let subscribed: { connections: number; seconds: number; client_rss_bytes: number };
  try {
    subscribed = await fanout.command(
      'subscribe',
      { url: plan.url, connections: plan.connections, concurrency: 64 },
      180_000,
    );
  } catch (err) {
    // The connections that did open are closed before the leg is reported failed.
    await fanout.command('close', {}, 60_000).catch(() => undefined);
    throw err;
  }
  // Idle, subscribed connections: nothing moves until the first head.
  await new Promise((resolve) => setTimeout(resolve, plan.idleMs));
  const collected = await collect();
  const idle = memorySample(plan.serverPid);
  const perLeg = resetPeak(plan.serverPid);
  const timeoutMs = 10_000;
  let outcome: FanoutOutcome;
  try {
    outcome = await fanout.command<FanoutOutcome>(
      'heads',
      { warmup: plan.warmupHeads, heads: plan.heads, gapMs: plan.gapMs, timeoutMs, pids: [plan.serverPid] },
      (plan.warmupHeads + plan.heads) * (timeoutMs + plan.gapMs) + 30_000,
    );
  } finally {
    await fanout.command('close', {}, 60_000);
  }
  const after = memorySample(plan.serverPid);
  const deliveries = outcome.heads * outcome.connections;
  const gatewayCpu = outcome.cpu_us[String(plan.serverPid)] ?? 0;
  const { cpu_us: _cpu, client_cpu_us: clientCpu, samples, ...figures } = outcome;
  const measured: LegResult = {
    ...result,
    response_bytes: outcome.notification_bytes,
    requests: deliveries,
    ...(outcome.last_delivery_ms === undefined ? {} : { latency_ms: outcome.last_delivery_ms }),
    cpu_us_per_request: deliveries > 0 ? round(gatewayCpu / deliveries, 2) : 0,
    client_cpu_us_per_request: deliveries > 0 ? round(clientCpu / deliveries, 2) : 0,
    ...systemShare(outcome.cpu_us, plan.serverPid),
    rss_before_bytes: idle.rssBytes,
    peak_rss_bytes: after.peakRssBytes,
    rss_growth_bytes: Math.max(0, after.peakRssBytes - idle.rssBytes),
    peak_is_per_leg: perLeg,
    fanout: {
      ...figures,
      subscribe_seconds: round(subscribed.seconds, 3),
      idle_ms: plan.idleMs,
      rss_after_full_gc: collected,
      rss_before_connections_bytes: before.rssBytes,
      rss_idle_bytes: idle.rssBytes,
      rss_per_idle_connection_bytes: Math.round((idle.rssBytes - before.rssBytes) / subscribed.connections),
      gateway_cpu_ms_per_head: outcome.heads > 0 ? round(gatewayCpu / outcome.heads / 1000, 3) : 0,
      client_cpu_ms_per_head: outcome.heads > 0 ? round(clientCpu / outcome.heads / 1000, 3) : 0,
      client_rss_bytes: subscribed.client_rss_bytes,
    },
  };
  const problems = outcome.missing + outcome.wrong + outcome.extra + outcome.closed_early;
  if (problems > 0) {
    return {
      ...measured,
      status: 'failed',
      reason:
        `${outcome.missing} missing, ${outcome.wrong} wrong, ${outcome.extra} extra deliveries, ` +
        `${outcome.closed_early} connections closed by the gateway: ${samples.join(' | ')}`,
    };
  }
  return measured;
}
