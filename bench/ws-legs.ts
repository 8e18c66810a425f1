/**
 * The WebSocket legs of issue 16 (SPEC §12), run by harness.ts beside the wrk legs:
 *
 * - `wsread`: `eth_blockNumber` request/answer over WebSocket against Switchyard's `wsread` network,
 *   whose origin is the same upstream path as the HTTP single-read leg. The load comes from
 *   ws-read-client.ts in its own Node process: as many connections as the HTTP leg, each keeping
 *   `inflight` requests in flight. One request is checked byte for byte first (bounded settle, as the
 *   wrk legs do); req/s, latency, and the CPU of the gateway, the upstream and the client come back.
 * - `wsfanout`: `connections` WebSockets subscribed to newHeads on the `fanout` network, whose origin
 *   is the fan-out process (ws-fanout-client.ts: origin and clients in one process, one clock). The
 *   gateway's RSS is read before the connections open and again once they are all subscribed and have
 *   been idle `idleMs`: the difference over the connection count is the RSS per idle connection. Then
 *   `warmup` + `heads` new heads; for each measured head the time from its push to the gateway until the
 *   last client has it. Every delivery is checked byte for byte; a missing, wrong, duplicated delivery
 *   or a connection the gateway closed fails the leg.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { Child } from './child.js';
import type { LegResult } from './legs.js';
import type { Exchange } from './payloads.js';
import { freePort } from './ports.js';
import { memorySample, resetPeak } from './procstat.js';
import { roundSpread, type Spread } from './stats.js';
import type { WsReadOutcome } from './ws-read-client.js';

const READ_CLIENT = fileURLToPath(new URL('./ws-read-client.ts', import.meta.url));
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
  rss_before_connections_bytes: number;
  rss_idle_bytes: number;
  rss_per_idle_connection_bytes: number;
  gateway_cpu_ms_per_head: number;
  client_cpu_ms_per_head: number;
  client_rss_bytes: number;
}

/** Opens one WebSocket, sends the request, and compares the first answer with the expected bytes. */
export function checkWsAnswer(url: string, exchange: Exchange, timeoutMs = 10_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    const finish = (problem: string | undefined): void => {
      clearTimeout(timer);
      ws.terminate();
      resolve(problem);
    };
    ws.once('open', () => ws.send(exchange.request));
    ws.once('message', (data: Buffer) => {
      const got = data.toString();
      finish(
        got === exchange.response ? undefined : `answer differs: got ${got.slice(0, 200)}, want ${exchange.response}`,
      );
    });
    ws.once('unexpected-response', (_req, res) => finish(`handshake answered HTTP ${res.statusCode}`));
    ws.once('error', (err) => finish(`connection failed: ${err.message}`));
  });
}

async function settleWs(url: string, exchange: Exchange, timeoutMs = 15_000): Promise<number | string> {
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    const problem = await checkWsAnswer(url, exchange);
    if (problem === undefined) return attempt === 0 ? 0 : Date.now() - start;
    if (Date.now() - start > timeoutMs) return problem;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface WsReadPlan {
  id: string;
  url: string;
  exchange: Exchange;
  connections: number;
  inflight: number;
  serverPid: number;
  upstreamPid: number;
}

export async function runWsReadLeg(
  plan: WsReadPlan,
  settings: { seconds: number; warmupSeconds: number },
): Promise<LegResult> {
  const result: LegResult = {
    id: plan.id,
    scenario: 'wsread',
    target: 'switchyard',
    title: 'WebSocket eth_blockNumber',
    status: 'ok',
    connections: plan.connections,
    inflight_per_connection: plan.inflight,
    request_bytes: Buffer.byteLength(plan.exchange.request),
    response_bytes: Buffer.byteLength(plan.exchange.response),
  };
  const waited = await settleWs(plan.url, plan.exchange);
  if (typeof waited === 'string') return { ...result, status: 'failed', reason: waited };
  if (waited > 0) result.settled_ms = waited;

  const memBefore = memorySample(plan.serverPid);
  const perLeg = resetPeak(plan.serverPid);
  const outcome = await runReadClient({
    url: plan.url,
    connections: plan.connections,
    inflight: plan.inflight,
    seconds: settings.seconds,
    warmupSeconds: settings.warmupSeconds,
    request: plan.exchange.request,
    response: plan.exchange.response,
    pids: [plan.serverPid, plan.upstreamPid],
  });
  const memAfter = memorySample(plan.serverPid);
  const requests = outcome.requests;
  const perRequest = (micros: number | undefined): number =>
    requests > 0 && micros !== undefined ? round(micros / requests, 2) : 0;
  const measured: LegResult = {
    ...result,
    requests,
    seconds: round(outcome.duration_s, 3),
    rps: round(requests / outcome.duration_s, 1),
    ...(outcome.latency_ms === undefined ? {} : { latency_ms: roundSpread(outcome.latency_ms) }),
    ws_errors: outcome.errors,
    cpu_us_per_request: perRequest(outcome.cpu_us[String(plan.serverPid)]),
    upstream_cpu_us_per_request: perRequest(outcome.cpu_us[String(plan.upstreamPid)]),
    client_cpu_us_per_request: perRequest(outcome.client_cpu_us),
    ...systemShare(outcome.cpu_us, plan.serverPid),
    rss_before_bytes: memBefore.rssBytes,
    peak_rss_bytes: memAfter.peakRssBytes,
    rss_growth_bytes: Math.max(0, memAfter.peakRssBytes - memBefore.rssBytes),
    peak_is_per_leg: perLeg,
  };
  const errorCount = outcome.errors.wrong_answer + outcome.errors.closed + outcome.errors.socket;
  if (requests === 0) return { ...measured, status: 'failed', reason: 'no request completed' };
  if (errorCount > 0) {
    return {
      ...measured,
      status: 'failed',
      reason: `${errorCount} errors ${JSON.stringify(outcome.errors)}: ${outcome.samples.join(' | ')}`,
    };
  }
  return measured;
}

function runReadClient(settings: Record<string, unknown> & { seconds: number; warmupSeconds: number }) {
  return new Promise<WsReadOutcome>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', READ_CLIENT, JSON.stringify(settings)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (settings.seconds + settings.warmupSeconds + 60) * 1000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('WSLOAD_JSON '));
      if (line === undefined) {
        reject(new Error(`ws-read-client exited with ${code}: ${(err || out).trim().slice(-500)}`));
        return;
      }
      resolve(JSON.parse(line.slice('WSLOAD_JSON '.length)) as WsReadOutcome);
    });
  });
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
  const before = memorySample(plan.serverPid);
  const subscribed = await fanout.command<{ connections: number; seconds: number; client_rss_bytes: number }>(
    'subscribe',
    { url: plan.url, connections: plan.connections, concurrency: 64 },
    180_000,
  );
  // Idle, subscribed connections: nothing moves until the first head.
  await new Promise((resolve) => setTimeout(resolve, plan.idleMs));
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

function systemShare(cpu: Record<string, number>, pid: number): { cpu_system_share?: number } {
  const total = cpu[String(pid)];
  const system = cpu[`${pid}:system`];
  return total === undefined || system === undefined || total === 0
    ? {}
    : { cpu_system_share: round(system / total, 3) };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
