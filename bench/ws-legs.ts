/**
 * The WebSocket legs of issue 16 (SPEC §12), run by harness.ts after the wrk legs, Switchyard only:
 * - `wsread` (ws-read-leg.ts): eth_blockNumber request/answer over WebSocket on the network `wsread`,
 *   whose origin is the HTTP single-read leg's upstream path; compared with that HTTP leg.
 * - `wsfanout` (ws-fanout-leg.ts): 5,000 (`--ws-connections`) connections subscribed to newHeads on the
 *   network `fanout`, whose origin is the fan-out process; time from a head's push to its last delivery,
 *   and RSS per idle connection.
 * Both networks are in the bench config only when their leg is selected (harness.ts).
 * Docs: docs/benchmarks.md, "WebSocket legs of issue 16".
 */
import { type LegResult, skippedLeg } from './legs.js';
import type { Nginx } from './nginx.js';
import type { BenchOptions } from './options.js';
import { single } from './payloads.js';
import type { SwitchyardProcess } from './switchyard.js';
import { type FanoutProcess, runFanoutLeg } from './ws-fanout-leg.js';
import { runWsReadLeg } from './ws-read-leg.js';

export { FanoutProcess } from './ws-fanout-leg.js';

/** The wsread leg's network: the same upstream path as the HTTP single-read leg. */
export const WS_READ_NETWORK = 'wsread';
export const FANOUT_NETWORK = 'fanout';

/** The chain id the fan-out origin answers (Switchyard does not compare it with its config). */
export const FANOUT_CHAIN_ID = 900_101;

/** Runs one WebSocket leg (or says why it cannot), logging as the wrk legs do. */
export async function runWsLeg(
  id: string,
  scenario: 'wsread' | 'wsfanout',
  options: BenchOptions,
  running: { switchyard?: SwitchyardProcess; upstream?: Nginx; fanout?: FanoutProcess },
  log: (line: string) => void,
): Promise<LegResult> {
  const { switchyard, upstream, fanout } = running;
  const wsBase = switchyard?.gatewayUrl.replace(/^http:/, 'ws:');
  const skip = (connections: number, reason: string): LegResult => {
    log(`bench: ${id}: skipped (${reason})`);
    const exchange = { request: single.request, response: single.response };
    return skippedLeg({ id, scenario, target: 'switchyard', connections, exchange }, reason);
  };
  let result: LegResult;
  try {
    if (scenario === 'wsread') {
      if (switchyard === undefined || upstream === undefined || wsBase === undefined) {
        return skip(options.connections, 'Switchyard or the upstream nginx not running');
      }
      log(
        `bench: ${id}: ${options.seconds} s, ${options.connections} WebSocket connection(s), ${options.wsInflight} in flight each…`,
      );
      result = await runWsReadLeg(
        {
          id,
          url: `${wsBase}/v1/${WS_READ_NETWORK}`,
          exchange: single,
          connections: options.connections,
          inflight: options.wsInflight,
          serverPid: switchyard.pid,
          upstreamPid: upstream.pid,
        },
        { seconds: options.seconds, warmupSeconds: options.warmupSeconds },
      );
      log(
        `bench: ${id}: ${result.status}${result.rps === undefined ? '' : `, ${result.rps} req/s`}${result.reason ? ` (${result.reason})` : ''}`,
      );
    } else {
      if (switchyard === undefined || fanout === undefined || wsBase === undefined) {
        return skip(options.wsConnections, 'Switchyard or the fan-out process not running');
      }
      log(
        `bench: ${id}: ${options.wsConnections} WebSocket connections subscribed to newHeads, ${options.wsHeads} heads…`,
      );
      result = await runFanoutLeg(
        {
          id,
          url: `${wsBase}/v1/${FANOUT_NETWORK}`,
          connections: options.wsConnections,
          heads: options.wsHeads,
          warmupHeads: options.quick ? 1 : 5,
          gapMs: 100,
          idleMs: options.quick ? 1_000 : 3_000,
          serverPid: switchyard.pid,
          ...(switchyard.inspectPort === undefined ? {} : { inspectPort: switchyard.inspectPort }),
        },
        fanout,
      );
      const f = result.fanout;
      log(
        `bench: ${id}: ${result.status}` +
          (f?.last_delivery_ms === undefined
            ? ''
            : `, last delivery p50 ${f.last_delivery_ms.p50} ms, p99 ${f.last_delivery_ms.p99} ms; ` +
              `${Math.round(f.rss_per_idle_connection_bytes / 102.4) / 10} KiB RSS per idle connection`) +
          (result.reason ? ` (${result.reason})` : ''),
      );
    }
  } catch (err) {
    const exchange = { request: single.request, response: single.response };
    result = {
      ...skippedLeg(
        { id, scenario, target: 'switchyard', connections: options.connections, exchange },
        (err as Error).message,
      ),
      status: 'failed',
    };
    log(`bench: ${id}: failed (${(err as Error).message})`);
  }
  return result;
}
