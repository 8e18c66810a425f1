/**
 * The WebSocket request/answer leg (`wsread`, issue 16): `eth_blockNumber` over WebSocket against
 * Switchyard's `wsread` network, whose origin is the same upstream path as the HTTP single-read leg.
 * The load comes from ws-read-client.ts in its own Node process: as many connections as the HTTP leg,
 * each keeping `inflight` requests in flight. One request is checked byte for byte first (bounded
 * settle, as the wrk legs do); req/s, latency, and the CPU of the gateway (with its kernel share), the
 * upstream and the client come back. Docs: docs/benchmarks.md, "WebSocket legs of issue 16".
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import type { LegResult } from './legs.js';
import type { Exchange } from './payloads.js';
import { memorySample, resetPeak } from './procstat.js';
import { round, roundSpread, systemShare } from './stats.js';
import type { WsReadOutcome } from './ws-read-client.js';

const READ_CLIENT = fileURLToPath(new URL('./ws-read-client.ts', import.meta.url));

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
