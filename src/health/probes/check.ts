import type { MonitorSettings } from '../../model/monitor-schema.js';
import type { Origin } from '../../model/pool.js';
import { httpCheck } from './http.js';
import { jsonRpcCheck } from './jsonrpc.js';
import type { ProbeResult } from './result.js';
import type { ProbeTransport } from './transport.js';

/**
 * One monitor check of one origin: the type's probe, repeated up to `retries` more times at once when it
 * failed on transport (timeout, refused, reset) — a wrong status, body or chain id is not retried. A check
 * that timed out on every attempt says so: "timeout after 2 s (3 attempts)".
 */
export async function checkOrigin(
  transport: ProbeTransport,
  origin: Origin,
  monitor: MonitorSettings,
  expectedChainIds: readonly number[],
): Promise<ProbeResult> {
  const attempts = monitor.retries + 1;
  let result: ProbeResult | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    result =
      monitor.type === 'jsonrpc'
        ? await jsonRpcCheck(transport, origin, monitor, expectedChainIds)
        : await httpCheck(transport, origin, monitor);
    if (result.ok || result.retryable !== true) return result;
  }
  const last = result as ProbeResult;
  return attempts > 1 ? { ...last, failure_reason: `${last.failure_reason} (${attempts} attempts)` } : last;
}
