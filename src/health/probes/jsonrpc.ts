import type { MonitorSettings } from '../../model/monitor-schema.js';
import type { Origin } from '../../model/pool.js';
import { rateLimitAnswer } from '../../model/rate-limit-answers.js';
import { failed, type ProbeResult, passed, throttledCheck } from './result.js';
import { checkHeaders, jsonRpcCheckUrl } from './target.js';
import { isProbeResponse, type ProbeTransport } from './transport.js';

/**
 * The jsonrpc check (Switchyard's extension), three single POSTs to the origin, sent as the gateway sends
 * its calls (same path and query, headers and Basic auth: target.ts), in order:
 * 1. `eth_chainId` must equal the chain id of every network whose `pools` list the pool
 *    ("chain id 0x1, expected 0xaa36a7"). A pool in no network skips this step (docs/health.md).
 * 2. `eth_syncing` must be `false`; a sync-status object fails ("syncing: block 0x10 of 0x200").
 *    An origin that does not implement it (-32601) counts as not syncing.
 * 3. `eth_blockNumber` is recorded; the pool round then fails origins more than `max_block_lag` blocks
 *    behind the pool's best origin, never a best above the network head the chain tracker adopted (see
 *    `applyBlockLag`).
 * Any non-2xx status, non-JSON body or JSON-RPC error fails the check naming the method — except HTTP 429
 * or a provider's rate-limit answer, which throttle it (result.ts `throttled`: neither up nor down).
 * `rtt` is the round trip of the eth_chainId call.
 */
const MAX_BODY = 1024 * 1024;

interface RpcOutcome {
  result?: unknown;
  failure?: ProbeResult;
  status: number | null;
  rttMs: number | null;
  errorCode?: number;
}

export async function jsonRpcCheck(
  transport: ProbeTransport,
  origin: Origin,
  monitor: MonitorSettings,
  expectedChainIds: readonly number[],
): Promise<ProbeResult> {
  // One target for the check's three calls (the URL and headers do not change between them).
  const url = jsonRpcCheckUrl(origin.address, monitor);
  const target: RpcTarget = { url, headers: checkHeaders(origin, monitor, url) };
  const call = (method: ProbeMethod) => rpc(transport, target, monitor, method);

  const chain = await call('eth_chainId');
  if (chain.failure !== undefined) return chain.failure;
  const { status, rttMs } = chain;
  const chainId = parseQuantity(chain.result);
  if (chainId === undefined) return failed(`eth_chainId returned ${describe(chain.result)}`, status, rttMs);
  const wrong = expectedChainIds.find((expected) => BigInt(expected) !== chainId);
  if (wrong !== undefined) {
    const expected = [...new Set(expectedChainIds)].map(hex).join(' and ');
    return failed(`chain id ${hex(chainId)}, expected ${expected}`, status, rttMs);
  }

  const syncing = await call('eth_syncing');
  if (syncing.failure !== undefined) {
    if (syncing.errorCode !== -32601) return { ...syncing.failure, rtt_ms: rttMs };
  } else if (syncing.result !== false) {
    return failed(`syncing: ${describeSync(syncing.result)}`, syncing.status, rttMs);
  }

  const head = await call('eth_blockNumber');
  if (head.failure !== undefined) return { ...head.failure, rtt_ms: rttMs };
  const block = parseQuantity(head.result);
  if (block === undefined) return failed(`eth_blockNumber returned ${describe(head.result)}`, head.status, rttMs);
  return { ...passed(status, rttMs), block_number: block };
}

/**
 * The pool-wide part of the jsonrpc check: an origin that passed but is more than `maxLag` blocks behind
 * the best head known in the pool (this round's results plus `otherHeads`, recent heads of origins not
 * probed in this round) fails with "block 0x10 is 20 behind the pool's best 0x24 (max_block_lag 8)".
 * The best is never above `adopted`, the network head the chain tracker adopted for the pool's networks
 * (SPEC §20): one origin claiming a head nobody else has makes no honest origin lag.
 */
export function applyBlockLag(
  results: Map<string, ProbeResult>,
  maxLag: number,
  otherHeads: readonly bigint[] = [],
  adopted?: bigint,
): void {
  let best: bigint | undefined;
  for (const head of [...otherHeads, ...[...results.values()].map((r) => r.block_number)]) {
    if (head !== undefined && (best === undefined || head > best)) best = head;
  }
  if (best === undefined) return;
  if (adopted !== undefined && best > adopted) best = adopted;
  for (const [name, result] of results) {
    if (!result.ok || result.block_number === undefined) continue;
    const lag = best - result.block_number;
    if (lag > BigInt(maxLag)) {
      results.set(name, {
        ...result,
        ok: false,
        failure_reason: `block ${hex(result.block_number)} is ${lag} behind the pool's best ${hex(best)} (max_block_lag ${maxLag})`,
      });
    }
  }
}

/** The calls a check makes (their names go into the request body as they are). */
type ProbeMethod = 'eth_chainId' | 'eth_syncing' | 'eth_blockNumber';

interface RpcTarget {
  url: URL;
  headers: Record<string, string | string[]>;
}

async function rpc(
  transport: ProbeTransport,
  target: RpcTarget,
  monitor: MonitorSettings,
  method: ProbeMethod,
): Promise<RpcOutcome> {
  const response = await transport.send({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[]}`,
    timeoutMs: monitor.timeout * 1000,
    allowInsecure: monitor.allow_insecure,
    maxBodyBytes: MAX_BODY,
    replayable: true, // the three calls only read
  });
  if (!isProbeResponse(response)) return { failure: response, status: null, rttMs: null };
  const { status, rttMs } = response;
  if (status === 429) return { failure: throttledCheck(`${method}: HTTP 429`, status, rttMs), status, rttMs };
  if (status < 200 || status > 299)
    return { failure: failed(`${method}: HTTP ${status}`, status, rttMs), status, rttMs };
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    return { failure: failed(`${method}: response is not JSON`, status, rttMs), status, rttMs };
  }
  const message = parsed as { result?: unknown; error?: { code?: unknown; message?: unknown } } | null;
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return { failure: failed(`${method}: response is not a JSON-RPC object`, status, rttMs), status, rttMs };
  }
  if (message.error !== undefined && message.error !== null) {
    const code = typeof message.error.code === 'number' ? message.error.code : undefined;
    const text = typeof message.error.message === 'string' ? message.error.message.slice(0, 120) : 'no message';
    const reason = `${method}: error ${code ?? '?'} ${text}`;
    const failure = rateLimitAnswer(message.error)
      ? throttledCheck(reason, status, rttMs)
      : failed(reason, status, rttMs);
    return code === undefined ? { failure, status, rttMs } : { failure, status, rttMs, errorCode: code };
  }
  if (!('result' in message))
    return { failure: failed(`${method}: response has no result`, status, rttMs), status, rttMs };
  return { result: message.result, status, rttMs };
}

function parseQuantity(value: unknown): bigint | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(value)) return undefined;
  return BigInt(value);
}

function hex(value: bigint | number): string {
  return `0x${value.toString(16)}`;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? 'nothing';
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function describeSync(value: unknown): string {
  const sync = value as { currentBlock?: unknown; highestBlock?: unknown } | null;
  if (sync !== null && typeof sync === 'object' && typeof sync.currentBlock === 'string') {
    return `block ${sync.currentBlock} of ${String(sync.highestBlock)}`;
  }
  return `eth_syncing returned ${describe(value)}`;
}
